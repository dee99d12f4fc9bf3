"""Import cost of pydantic_lenient against pydantic's own, as ratios from one run.

    python benchmarks/bench_import.py [ROUNDS]

Each import runs in a fresh interpreter (nothing cached in ``sys.modules``), timed inside it so the
interpreter's start-up is left out. The cases take turns round by round, so a slow moment on a
shared machine hits them alike, and the median round stands for each case.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import print_ratios

SOURCE = Path(__file__).resolve().parent.parent / "src"
TIMED = "import time; start = time.perf_counter(); {statement}; print(time.perf_counter() - start)"
CASES = {
    "import pydantic": "import pydantic",
    "from pydantic import BaseModel, TypeAdapter": "from pydantic import BaseModel, TypeAdapter",
    "import pydantic_lenient": "import pydantic_lenient",
    # A tool module's imports: the types, beside the pydantic it uses anyway.
    "the types": "from pydantic import BaseModel, TypeAdapter; from pydantic_lenient import LenientInt, StrictBoolish",
    # Every public name, the normalizer and the catalog included.
    "everything": "from pydantic import BaseModel, TypeAdapter; from pydantic_lenient import *",
}


def import_seconds(statement: str) -> float:
    """Seconds one fresh interpreter takes to run ``statement`` (this checkout's package first on the path)."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SOURCE), os.environ.get("PYTHONPATH", "")])}
    completed = subprocess.run(
        [sys.executable, "-c", TIMED.format(statement=statement)],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return float(completed.stdout)


def main(rounds: int = 21) -> int:
    samples: dict[str, list[float]] = {case: [] for case in CASES}
    for _ in range(rounds):
        for case, statement in CASES.items():
            samples[case].append(import_seconds(statement))
    medians = {case: statistics.median(times) for case, times in samples.items()}
    met = print_ratios(
        f"import in a fresh interpreter, median of {rounds} interleaved rounds",
        [
            ("import pydantic_lenient, vs import pydantic", "import pydantic_lenient", "import pydantic", 1.3),
            (
                "LenientInt and StrictBoolish beside BaseModel, vs BaseModel alone",
                "the types",
                "from pydantic import BaseModel, TypeAdapter",
                1.3,
            ),
        ],
        medians,
    )
    # Every subsystem at once (normalizer, catalog, audit, targets) has no target: it is what a
    # program pays that uses them all, reported so that a change in it is seen.
    everything = medians["everything"] / medians["from pydantic import BaseModel, TypeAdapter"]
    print(f"{'every public name beside BaseModel, vs BaseModel alone (reported)':66} {everything:6.2f}x")
    print(f"\n{sum(met)} of {len(met)} targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*(int(argument) for argument in sys.argv[1:])))
