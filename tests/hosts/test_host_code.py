"""The host profiles agree with the hosts' real code, where a registry ships it (issue 33, item 1).

Gemini CLI (``@google/gemini-cli-core``) and Qwen Code (``@qwen-code/qwen-code``) run from npm, and
VS Code's validation runs on the Ajv it pins (8.18.0) with its options. Over every schema of the host
matrix (each tool of the table, served plainly and in every shape) and the forms models emit plus
hostile ones, the Python profile must list the tool as the real code does and send the server the
same arguments, or refuse the same calls. The profiles of the hosts whose code is not on a registry
rest on the same Ajv model, so this is what makes them trustworthy.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pydantic_lenient.hosts import PROFILES
from tests.hosts.conftest import HostCodeRunner
from tests.hosts.matrix import SHAPES, cases, schema_of, tools

# Forms beyond the matrix's: JS number syntax Ajv's coercion reads, case, blanks, wrong types.
_HOSTILE: tuple[Any, ...] = (
    "", " ", " 12 ", "0x1A", "1e3", "-0", "007", "TRUE", "False", "null", "NULL", "abc", "1.5", "[1, 2]",
    '{"x": 1, "y": 2}', "[]", "{}", 0, 1, -1, 1.5, 300, True, False, None, [], {}, ["a"], [1, "2"],
    {"x": "1", "y": "2"}, "\u0663", "2026-02-30",
)  # fmt: skip


def _normal(value: Any) -> Any:
    """A JSON value as JS carries it: integral numbers are integers."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_normal(item) for item in value]
    if isinstance(value, dict):
        return {key: _normal(item) for key, item in value.items()}
    return value


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    rows = []
    for tool in tools(tmp_path_factory.mktemp("host_code")):
        calls = [case.arguments for case in cases(tool)] + [{"value": value} for value in _HOSTILE]
        rows += [(f"{tool.name} [{shape}]", schema_of(tool, shape), calls) for shape in SHAPES]
    return rows


@pytest.mark.parametrize("host", ["gemini-cli", "qwen-code", "vscode"])
def test_the_profile_does_what_the_host_code_does(
    host_code: HostCodeRunner, table: list[tuple[str, dict[str, Any], list[dict[str, Any]]]], host: str
) -> None:
    profile = PROFILES[host]
    results = host_code([{"host": host, "schema": schema, "calls": calls} for _, schema, calls in table])
    disagreements: list[tuple[Any, ...]] = []
    compared = 0
    for (name, schema, calls), real in zip(table, results, strict=True):
        listing = profile.listing(schema)
        assert listing.schema == real["schema"], (name, "the rewritten schema")
        for arguments, real_call in zip(calls, real["calls"], strict=True):
            mine = profile.transform(_copy(listing.schema), _copy(arguments))
            compared += 1
            if mine.sent != real_call["sent"]:
                disagreements.append((name, arguments, "sent" if real_call["sent"] else "refused", mine.refusal))
            elif mine.sent and _normal(mine.arguments) != _normal(real_call["arguments"]):
                disagreements.append((name, arguments, real_call["arguments"], mine.arguments))
    assert compared > 3000
    assert not disagreements, (len(disagreements), disagreements[:10])


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def test_the_real_code_is_the_pinned_code() -> None:
    """The lockfile pins the versions the profiles were read from."""
    lock = json.loads((Path(__file__).parent / "node" / "package-lock.json").read_text(encoding="utf-8"))
    packages = lock["packages"]
    assert packages["node_modules/@google/gemini-cli-core"]["version"] == "0.61.0"
    assert packages["node_modules/@qwen-code/qwen-code"]["version"] == "0.24.4"
    assert packages["node_modules/ajv"]["version"] == "8.18.0"  # microsoft/vscode-copilot-chat's package-lock.json
