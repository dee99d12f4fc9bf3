"""The repair benchmark (benchmarks/bfcl): its committed dataset keeps its promises, and a sample
of the scorer runs every engine, so neither can rot."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema_rs

from tests.conftest import AjvRunner
from tests.sdks import require

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "bfcl"
PYTHON_ENGINES = (
    "pydantic-lenient repair",
    "pydantic lax (FastMCP)",
    "MCP SDK pre_parse_json + lax",
    "json_repair schema mode",
    "qwen-code coercion (port)",
)


def _lines(name: str) -> list[dict[str, Any]]:
    with (BENCHMARK / "data" / name).open(encoding="utf-8") as file:
        return [json.loads(line) for line in file]


def _score(tmp_path: Path, *options: str) -> dict[str, Any]:
    require("mcp.server.mcpserver")  # the scorer imports the official SDK: one of its engines
    output = tmp_path / "results.json"
    command = [sys.executable, str(BENCHMARK / "score.py"), "--sample", "6", "--rounds", "1", "--json", str(output)]
    subprocess.run([*command, *options], check=True, capture_output=True, text=True, timeout=300)
    results: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
    return results


def test_dataset_matches_its_build_summary_and_keeps_its_promises() -> None:
    tools = {record["tool"]: jsonschema_rs.validator_for(record["schema"]) for record in _lines("tools.jsonl")}
    cases = _lines("cases.jsonl")
    summary = json.loads((BENCHMARK / "data" / "build.json").read_text(encoding="utf-8"))
    assert summary["cases"] == len(cases)
    assert summary["tools"] == len(tools)
    assert summary["cases_by_family"] == dict(sorted(Counter(f"{c['kind']}/{c['family']}" for c in cases).items()))
    for case in cases:
        validator = tools[case["tool"]]
        if case["kind"] == "unrecoverable":
            assert case["truth"] == case["sent"], case["id"]
            assert not validator.is_valid(case["sent"]), case["id"]
        else:
            assert validator.is_valid(case["truth"]), case["id"]
        if case["kind"] in ("correct", "bait"):
            assert case["truth"] == case["sent"], case["id"]
        if case["kind"] == "mangled":
            assert case["truth"] != case["sent"], case["id"]
            # Only a `{}` parameter takes JSON text as sent, and only undeclared keys (a misnamed
            # optional parameter, where the schema allows extra keys) can leave a mangled call valid.
            if case["family"] not in ("any_typed_as_string", "name_case_convention"):
                assert not validator.is_valid(case["sent"]), case["id"]
    assert (BENCHMARK / "data" / "LICENSE-bfcl-eval").read_text(encoding="utf-8").count("Apache License") >= 1


def test_scorer_sample_runs_every_python_engine_on_every_case(tmp_path: Path) -> None:
    results = _score(tmp_path, "--without-ajv")
    assert tuple(results["engines"]) == PYTHON_ENGINES
    total = sum(results["counts"].values())
    assert results["cases"] == total
    for row in results["engines"].values():
        assert sum(tally["cases"] for tally in row["families"].values()) == total
        assert row["us_per_call"] > 0
    ours = results["engines"]["pydantic-lenient repair"]
    assert ours["false"] == 0
    assert ours["wrong"] == 0
    assert ours["left_as_sent"] == ours["unrecoverable"]
    for family in ("stringified_scalar", "boolean_letter_case", "json_text_top", "json_text_nested"):
        assert ours["families"][family].get("recovered") == ours["families"][family]["cases"], family
    # The engines differ where the published behaviour says they do.
    lax = results["engines"]["pydantic lax (FastMCP)"]["families"]
    assert lax["json_text_top"].get("recovered", 0) == 0
    assert lax["unrecoverable_yes_no"].get("wrong") == lax["unrecoverable_yes_no"]["cases"]
    sdk = results["engines"]["MCP SDK pre_parse_json + lax"]["families"]
    assert sdk["any_typed_as_string"].get("recovered") == sdk["any_typed_as_string"]["cases"]


def test_scorer_sample_runs_ajv(tmp_path: Path, ajv: AjvRunner) -> None:
    # `ajv` skips this test (or fails it under PYDANTIC_LENIENT_REQUIRE_AJV) when node or Ajv is missing.
    results = _score(tmp_path)
    row = results["engines"]["Ajv coerceTypes"]
    assert row["version"].startswith("8.")
    assert sum(tally["cases"] for tally in row["families"].values()) == results["cases"]
    assert row["families"]["stringified_scalar"].get("recovered") == row["families"]["stringified_scalar"]["cases"]
    assert row["families"]["json_text_top"].get("recovered", 0) == 0
