"""Draw the repair benchmark's chart from the scorer's figures.

python benchmarks/bfcl/score.py --json benchmarks/bfcl/results.json && python benchmarks/bfcl/chart.py
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"
CHART = HERE.parent.parent / "docs" / "repair-benchmark.png"


def main() -> int:
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    engines = list(results["engines"])
    rows = [results["engines"][name] for name in engines]
    figure, (recovered, harmed, speed) = plt.subplots(1, 3, figsize=(15, 4.8), sharey=True)
    positions = range(len(engines))
    recovered.barh(positions, [row["recovered_pct"] for row in rows], color="#2a7ab9")
    recovered.set_title(f"recovered: % of {rows[0]['mangled']} mangled calls")
    recovered.set_xlim(0, 100)
    harmed.barh(positions, [row["false"] for row in rows], color="#d9822b", label="false (correct, bait)")
    harmed.barh(
        positions, [row["wrong"] for row in rows], left=[row["false"] for row in rows], color="#c23b22", label="wrong"
    )
    changeable = rows[0]["mangled"] + rows[0]["unrecoverable"]
    harmed.set_title(f"false of {rows[0]['correct_and_bait']} clean / wrong of {changeable} other calls")
    harmed.legend(loc="lower right")
    speed.barh(positions, [row["us_per_call"] for row in rows], color="#5b8c5a")
    speed.set_title("time per call (µs, log scale)")
    speed.set_xscale("log")
    labels = [f"{name}\n{row['version']}" for name, row in zip(engines, rows, strict=True)]
    recovered.set_yticks(list(positions), labels)
    recovered.invert_yaxis()
    for axis, key, unit in ((recovered, "recovered_pct", "%"), (speed, "us_per_call", "")):
        for position, row in zip(positions, rows, strict=True):
            axis.text(row[key], position, f" {row[key]:.1f}{unit}", va="center", fontsize=8)
    for position, row in zip(positions, rows, strict=True):
        harmed.text(row["false"] + row["wrong"], position, f" {row['false']} / {row['wrong']}", va="center", fontsize=8)
    figure.suptitle(f"Repairing wrong-typed tool calls: {results['cases']} calls from BFCL (bfcl-eval 2026.3.23)")
    figure.tight_layout()
    figure.savefig(CHART, dpi=110)
    print(CHART)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
