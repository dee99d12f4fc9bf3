"""Score every repair engine on every case of the BFCL-derived dataset, in one process and one run.

python benchmarks/bfcl/score.py [--sample N] [--rounds R] [--without-ajv] [--json PATH]

Each case is one tool call: what a model sent, and the truth. Per engine:

- **recovered**: mangled calls that come back equal to the truth;
- **false**: correct and bait calls that come back changed, or refused;
- **wrong**: mangled and unrecoverable calls that come back changed, valid against the schema, and
  not the truth (a silent corruption);
- **left as sent**: unrecoverable calls returned unchanged or refused, as they must be;
- **time per call**: the mean over all cases of each case's best of R rounds; schema preparation
  (compiling, building a model) is done once per tool and not counted.

Values are compared as JSON: ``1`` equals ``1.0``, never ``true``. Ajv runs in node (one process
for all its calls, timed inside node), started by this script.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema_rs

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engines import AJV, ENGINES

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
AJV_RUNNER = HERE / "ajv_coerce.mjs"
AJV_MODULES = HERE.parent.parent / "tests" / "ajv" / "node_modules" / "ajv"


class Outcome(NamedTuple):
    """What one engine returned for one case (None: refused), and its best time in nanoseconds."""

    arguments: dict[str, Any] | None
    ns: float


def json_equal(left: Any, right: Any) -> bool:
    """Equal as JSON values: numbers by value, booleans apart from numbers, containers member by member."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


def load(sample: int | None) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The tools and the cases; with ``sample``, the first ``sample`` cases of each family."""
    tools = {}
    with (DATA / "tools.jsonl").open(encoding="utf-8") as file:
        for line in file:
            record = json.loads(line)
            tools[record["tool"]] = record["schema"]
    cases = []
    taken: Counter[str] = Counter()
    with (DATA / "cases.jsonl").open(encoding="utf-8") as file:
        for line in file:
            case = json.loads(line)
            if sample is None or taken[case["family"]] < sample:
                taken[case["family"]] += 1
                cases.append(case)
    used = {case["tool"] for case in cases}
    return {name: schema for name, schema in tools.items() if name in used}, cases


def run_python(tools: dict[str, dict[str, Any]], cases: list[dict[str, Any]], rounds: int) -> dict[str, list[Outcome]]:
    calls = {engine.name: {name: engine.prepare(schema) for name, schema in tools.items()} for engine in ENGINES}
    texts = [json.dumps(case["sent"]) for case in cases]
    best: dict[str, list[float]] = {engine.name: [float("inf")] * len(cases) for engine in ENGINES}
    returned: dict[str, list[Any]] = {engine.name: [None] * len(cases) for engine in ENGINES}
    clock = time.perf_counter_ns
    for round_ in range(rounds):
        for engine in ENGINES:  # interleaved, so a slow moment on a shared machine hits every engine alike
            by_tool, times, out = calls[engine.name], best[engine.name], returned[engine.name]
            for index, case in enumerate(cases):
                given = texts[index] if engine.takes_text else json.loads(texts[index])  # a fresh copy
                call = by_tool[case["tool"]]
                start = clock()
                result = call(given)
                elapsed = clock() - start
                times[index] = min(times[index], elapsed)
                if round_ == 0:
                    out[index] = json.loads(json.dumps(result)) if result is not None else None
    return {name: [Outcome(a, t) for a, t in zip(returned[name], best[name], strict=True)] for name in returned}


def run_ajv(tools: dict[str, dict[str, Any]], cases: list[dict[str, Any]], rounds: int) -> tuple[str, list[Outcome]]:
    node = shutil.which("node")
    if node is None or not AJV_MODULES.is_dir():
        raise SystemExit("Ajv needs node and `npm ci --prefix tests/ajv`; or pass --without-ajv")
    payload = {"tools": tools, "cases": [{"tool": c["tool"], "sent": c["sent"]} for c in cases], "rounds": rounds}
    completed = subprocess.run(
        [node, str(AJV_RUNNER)], input=json.dumps(payload), capture_output=True, text=True, check=True, timeout=600
    )
    answer = json.loads(completed.stdout)
    return answer["version"], [Outcome(r["arguments"], r["ns"]) for r in answer["results"]]


def score(cases: list[dict[str, Any]], tools: dict[str, dict[str, Any]], outcomes: list[Outcome]) -> dict[str, Any]:
    validators = {name: jsonschema_rs.validator_for(schema) for name, schema in tools.items()}
    counts: Counter[str] = Counter()
    families: defaultdict[str, Counter[str]] = defaultdict(Counter)
    examples: defaultdict[str, list[str]] = defaultdict(list)
    for case, outcome in zip(cases, outcomes, strict=True):
        kind, family, sent, truth, out = case["kind"], case["family"], case["sent"], case["truth"], outcome.arguments
        changed = out is not None and not json_equal(out, sent)
        valid = out is not None and validators[case["tool"]].is_valid(out)
        counts[kind] += 1
        families[family]["cases"] += 1
        if kind == "mangled":
            verdict = (
                "recovered"
                if out is not None and json_equal(out, truth)
                else "wrong"
                if changed and valid
                else "missed"
            )
        elif kind in ("correct", "bait"):
            verdict = "false" if out is None or changed else "kept"
        else:
            verdict = "wrong" if changed and valid else "changed" if changed else "kept"
        counts[f"{kind}/{verdict}"] += 1
        families[family][verdict] += 1
        if verdict in ("wrong", "false", "missed", "changed") and len(examples[f"{family}/{verdict}"]) < 3:
            examples[f"{family}/{verdict}"].append(case["id"])
    mangled, clean, unrecoverable = counts["mangled"], counts["correct"] + counts["bait"], counts["unrecoverable"]
    return {
        "recovered": counts["mangled/recovered"],
        "recovered_pct": 100 * counts["mangled/recovered"] / mangled if mangled else 0.0,
        "mangled": mangled,
        "false": counts["correct/false"] + counts["bait/false"],
        "false_on_correct": counts["correct/false"],
        "false_on_bait": counts["bait/false"],
        "correct_and_bait": clean,
        "wrong": counts["mangled/wrong"] + counts["unrecoverable/wrong"],
        "wrong_on_mangled": counts["mangled/wrong"],
        "wrong_on_unrecoverable": counts["unrecoverable/wrong"],
        "left_as_sent": counts["unrecoverable/kept"],
        "unrecoverable": unrecoverable,
        "us_per_call": sum(o.ns for o in outcomes) / len(outcomes) / 1000 if outcomes else 0.0,
        "families": {family: dict(sorted(c.items())) for family, c in sorted(families.items())},
        "examples": dict(sorted(examples.items())),
    }


def report(results: dict[str, Any]) -> str:
    lines = [
        f"{len(results['cases'])} cases ({results['counts']}), {results['rounds']} rounds",
        "",
        f"{'engine':32} {'version':>9} {'recovered':>10} {'false':>7} {'wrong':>7} {'left':>7} {'us/call':>8}",
    ]
    for name, row in results["engines"].items():
        lines.append(
            f"{name:32} {row['version']:>9} {row['recovered_pct']:9.1f}% {row['false']:>7} {row['wrong']:>7}"
            f" {row['left_as_sent']:>7} {row['us_per_call']:8.1f}"
        )
    families = sorted({f for row in results["engines"].values() for f in row["families"]})
    lines += ["", "recovered (mangled) or kept (correct, bait, unrecoverable), per family:"]
    lines.append(f"{'family':34}" + "".join(f" {name[:11]:>11}" for name in results["engines"]))
    for family in families:
        cells = []
        for row in results["engines"].values():
            tally = row["families"].get(family, {})
            good = tally.get("recovered", 0) + tally.get("kept", 0)
            cells.append(f" {good:>5}/{tally.get('cases', 0):<5}")
        lines.append(f"{family:34}" + "".join(cells))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, help="score only the first N cases of each family")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds; each case's best counts")
    parser.add_argument("--without-ajv", action="store_true", help="leave out Ajv (needs node)")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    arguments = parser.parse_args()
    tools, cases = load(arguments.sample)
    outcomes = run_python(tools, cases, arguments.rounds)
    versions = {engine.name: engine.version for engine in ENGINES}
    if not arguments.without_ajv:
        versions[AJV], outcomes[AJV] = run_ajv(tools, cases, arguments.rounds)
    results = {
        "cases": [case["id"] for case in cases],
        "counts": dict(sorted(Counter(case["kind"] for case in cases).items())),
        "rounds": arguments.rounds,
        "engines": {name: {"version": versions[name], **score(cases, tools, got)} for name, got in outcomes.items()},
    }
    print(report(results))
    if arguments.json:
        summary = {**results, "cases": len(results["cases"])}
        arguments.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
