"""Both MCP adapters record every call's outcome: in process, through each SDK's own client."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
from pydantic import BeforeValidator

from pydantic_lenient import Normalizer
from pydantic_lenient.observe.auditlog import read_audit_log
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.observe.stats_file import OutcomeStats, load_outcomes
from pydantic_lenient.observe.suggestions import rules_document, suggest
from tests.sdks import require


def search(folder: str, limit: Optional[int] = None, dry_run: bool = False) -> dict[str, Any]:
    """Search a folder."""
    return {"folder": folder, "limit": limit, "dry_run": dry_run}


def edit_file(path: str, old_text: str) -> dict[str, Any]:
    """Edit a file."""
    return {"path": path, "old_text": old_text}


def explode(path: str) -> str:
    """A tool that fails in its body."""
    raise ValueError(f"cannot open {path}")


TOOLS = (search, edit_file, explode)
Calls = list[tuple[str, dict[str, Any]]]


async def _official(calls: Calls, options: dict[str, Any]) -> list[bool]:
    mcp = require("mcp")
    from pydantic_lenient.adapters.mcp import make_lenient

    server = require("mcp.server.mcpserver").MCPServer("recorded")
    for tool in options.pop("tools", TOOLS):
        server.tool()(tool)
    make_lenient(server, **options)
    async with mcp.Client(server) as client:
        return [bool((await client.call_tool(name, arguments)).is_error) for name, arguments in calls]


async def _fastmcp(calls: Calls, options: dict[str, Any]) -> list[bool]:
    fastmcp = require("fastmcp")
    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    tools = options.pop("tools", TOOLS)
    server = fastmcp.FastMCP("recorded", middleware=[LenientMiddleware(**options)], strict_input_validation=True)
    for tool in tools:
        server.tool(tool)
    async with fastmcp.Client(server) as client:
        return [(await client.call_tool(name, arguments, raise_on_error=False)).is_error for name, arguments in calls]


SDKS = [pytest.param(_official, id="official-sdk"), pytest.param(_fastmcp, id="fastmcp")]


def serve(sdk: Any, calls: Calls, **options: Any) -> list[bool]:
    return list(asyncio.run(sdk(calls, options)))


def recorded(sdk: Any, calls: Calls, log_dir: Path, **options: Any) -> tuple[list[bool], OutcomeStats]:
    recorder = OutcomeRecorder(log_dir, flush_every=3600, normalizer=options.get("normalizer"))
    errors = serve(sdk, calls, recorder=recorder, **options)
    recorder.close()
    return errors, load_outcomes(log_dir)


@pytest.mark.parametrize("sdk", SDKS)
def test_ok_refused_and_failed_calls_are_told_apart(sdk: Any, tmp_path: Path) -> None:
    calls: Calls = [
        ("search", {"folder": "Dev", "limit": 5}),
        ("search", {"folder": "Dev", "limit": "many"}),
        ("edit_file", {"path": "a", "old_str": "x"}),
        ("explode", {"path": "a"}),
    ]
    errors, stats = recorded(sdk, calls, tmp_path)
    assert errors == [False, True, True, True]
    counts = {tool.tool: (tool.ok, tool.refused, tool.error) for tool in stats.tools}
    assert counts == {"search": (1, 1, 0), "edit_file": (0, 1, 0), "explode": (0, 0, 1)}
    assert all(tool.duration_ms > 0 for tool in stats.tools)
    patterns = {(p.tool, p.param, p.shape) for p in stats.patterns}
    assert patterns == {
        ("search", "limit", "string"),
        ("edit_file", "old_text", "missing parameter `old_text`"),
        ("edit_file", "old_str", "unknown parameter `old_str`"),
    }
    [alias] = stats.aliases
    assert (alias.unknown, alias.missing) == ("old_str", "old_text")
    entries = read_audit_log(tmp_path)
    assert [(entry.tool, entry.status) for entry in entries] == [
        ("search", "ok"),
        ("search", "refused"),
        ("edit_file", "refused"),
        ("explode", "error"),
    ]
    assert "many" not in (tmp_path / "audit.jsonl").read_text(encoding="utf-8")  # shapes, never values


@pytest.mark.parametrize("sdk", SDKS)
def test_normalizations_are_recorded_with_the_call(sdk: Any, tmp_path: Path) -> None:
    rules = [{"id": "edit-old_str", "tools": ["edit_file"], "type": "param_alias", "from": "old_str", "to": "old_text"}]
    normalizer = Normalizer.from_json(json.dumps(rules))
    errors, stats = recorded(sdk, [("edit_file", {"path": "a", "old_str": "x"})], tmp_path, normalizer=normalizer)
    assert errors == [False]
    assert [(entry.status, entry.norms) for entry in read_audit_log(tmp_path)] == [("ok", ["edit-old_str"])]
    assert (stats.normalizer or {})["total_normalized"] == 1
    assert json.loads((tmp_path / "normalizer_stats.json").read_text(encoding="utf-8"))["total_normalized"] == 1


@pytest.mark.parametrize("sdk", SDKS)
def test_an_alias_conflict_is_recorded_as_refused(sdk: Any, tmp_path: Path) -> None:
    rules = [{"id": "edit-old_str", "tools": ["edit_file"], "type": "param_alias", "from": "old_str", "to": "old_text"}]
    normalizer = Normalizer.from_json(json.dumps(rules))
    call = ("edit_file", {"path": "a", "old_str": "x", "old_text": "y"})
    errors, stats = recorded(sdk, [call], tmp_path, normalizer=normalizer)
    assert errors == [True]
    assert [(p.error_type, p.count) for p in stats.patterns] == [("normalization_conflict", 1)]


@pytest.mark.parametrize("sdk", SDKS)
def test_suggestions_from_real_calls_fix_those_calls(sdk: Any, tmp_path: Path) -> None:
    calls: Calls = [("edit_file", {"path": "a", "old_str": "x"})] * 3 + [
        ("search", {"folder": "D", "dry_run": "TRUE"})
    ] * 3
    errors, stats = recorded(sdk, calls, tmp_path)
    # The official SDK's lax validation takes "TRUE" for a bool; FastMCP's strict one refuses it.
    assert errors == [True] * 3 + [sdk is _fastmcp] * 3
    suggestions = suggest(stats)
    assert {suggestion.rule["type"] for suggestion in suggestions if suggestion.rule} >= {"param_alias"}
    fixed = Normalizer.from_json(json.dumps(rules_document(suggestions)))
    assert serve(sdk, calls, normalizer=fixed) == [False] * len(calls)


def test_fastmcp_strict_digit_strings_suggest_the_lenient_annotation(tmp_path: Path) -> None:
    errors, stats = recorded(_fastmcp, [("search", {"folder": "D", "limit": "100"})] * 3, tmp_path)
    assert errors == [True] * 3
    [annotation] = [s for s in suggest(stats) if s.kind == "annotation"]
    assert (annotation.param, annotation.annotation, annotation.replacement) == (
        "limit",
        "Optional[int]",
        "Lenient[Optional[LenientInt]]",
    )
    [rule] = [s.rule for s in suggest(stats) if s.rule]
    assert (rule["type"], rule["coerce_to"]) == ("type_coerce", "int")


@pytest.mark.parametrize("sdk", SDKS)
def test_a_log_dir_that_refuses_writes_never_breaks_a_call(sdk: Any, tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    log_dir.write_text("a file where the directory should be", encoding="utf-8")
    recorder = OutcomeRecorder(log_dir, flush_every=0.01, save_every=0.01)
    assert serve(sdk, [("search", {"folder": "Dev"})] * 3, recorder=recorder) == [False] * 3
    log_dir.unlink()
    recorder.close()
    assert load_outcomes(log_dir).tools[0].ok == 3  # nothing lost once the disk takes it again


@pytest.mark.parametrize("sdk", SDKS)
def test_log_dir_option(sdk: Any, tmp_path: Path) -> None:
    assert serve(sdk, [("search", {"folder": "Dev"})], log_dir=tmp_path) == [False]
    # The recorder saves every 30 s and at exit; the audit line is flushed within a second.
    with pytest.raises(ValueError, match="not both"):
        serve(sdk, [], log_dir=tmp_path, recorder=OutcomeRecorder())


@pytest.mark.parametrize("sdk", SDKS)
def test_unknown_tools_and_calls_without_arguments_are_recorded(sdk: Any, tmp_path: Path) -> None:
    errors, stats = recorded(sdk, [("no_such_tool", {}), ("explode", {})], tmp_path)
    assert errors == [True, True]
    counts = {tool.tool: (tool.ok, tool.refused, tool.error) for tool in stats.tools}
    assert counts == {"no_such_tool": (0, 0, 1), "explode": (0, 1, 0)}
    assert [(p.param, p.error_type) for p in stats.patterns] == [("path", "missing")]


VALIDATIONS: list[object] = []


def _counted(value: object) -> object:
    VALIDATIONS.append(value)
    return value


def counted(code: Annotated[int, BeforeValidator(_counted)]) -> int:
    """A tool that notes each time its argument is validated."""
    return code


@pytest.mark.parametrize("sdk", SDKS)
def test_a_refused_call_is_validated_once_and_recorded_from_that_error(sdk: Any, tmp_path: Path) -> None:
    """The adapter records the SDK's own validation error rather than validating the call again."""
    VALIDATIONS.clear()
    recorder = OutcomeRecorder(tmp_path, flush_every=3600, sample_chars=4)
    calls: Calls = [("counted", {"code": "abcdef", "extra": 1}), ("counted", {"code": 7})]
    assert serve(sdk, calls, recorder=recorder, tools=(counted,)) == [True, False]
    assert VALIDATIONS == ["abcdef", 7]
    recorder.close()
    [refused, ok] = read_audit_log(tmp_path)
    assert (refused.status, ok.status) == ("refused", "ok")
    errors = {(error.param, error.shape, error.sample) for error in refused.errors}
    assert errors == {("code", "string", "abcd…"), ("extra", "unknown parameter `extra`", None)}


def test_a_refusal_a_tool_meets_calling_another_is_not_its_own(tmp_path: Path) -> None:
    """A tool that calls another in process and fails on that one's refusal failed in the tool:
    the inner validation error is not taken for the outer call's."""
    mcp = require("mcp")
    from pydantic_lenient.adapters.mcp import make_lenient

    server = require("mcp.server.mcpserver").MCPServer("nested")

    def inner(n: int) -> int:
        return n

    async def outer(path: str) -> str:
        try:
            await server.call_tool("inner", {"n": "not a number"})
        except Exception as error:
            raise ValueError(f"inner call failed for {path}") from error
        return path

    server.tool()(inner)
    server.tool()(outer)

    recorder = OutcomeRecorder(tmp_path, flush_every=3600)
    make_lenient(server, recorder=recorder)

    async def call() -> bool:
        async with mcp.Client(server) as client:
            return bool((await client.call_tool("outer", {"path": "a"})).is_error)

    assert asyncio.run(call())
    recorder.close()
    assert [(entry.tool, entry.status, entry.errors) for entry in read_audit_log(tmp_path)] == [("outer", "error", [])]


SECRET = "sk-SECRET-4f1c9a"


@pytest.mark.parametrize("sdk", SDKS)
def test_no_value_a_client_sent_reaches_any_written_file(sdk: Any, tmp_path: Path) -> None:
    # A secret in every argument position: each parameter, a wrong-typed one, an alias sent beside
    # its target, an unknown name's value, inside nested values; then every file is scanned.
    rules = [
        {"id": "edit-old_str", "tools": ["edit_file"], "type": "param_alias", "from": "old_str", "to": "old_text"},
        {"id": "limit-int", "tools": ["search"], "type": "type_coerce", "from": "limit", "coerce_to": "int"},
    ]
    normalizer = Normalizer(rules, on_conflict="keep_target")
    calls: Calls = [
        ("search", {"folder": SECRET, "limit": SECRET, "dry_run": SECRET}),
        ("search", {"folder": [SECRET], "limit": {"a": SECRET}, "dry_run": [SECRET], "extra": SECRET}),
        ("edit_file", {"path": SECRET, "old_str": SECRET, "old_text": "kept"}),
        ("edit_file", {"path": {"p": SECRET}, "old_str": [SECRET]}),
        ("explode", {"path": SECRET}),
    ]
    log_dir = tmp_path / "logs"
    recorded(sdk, calls, log_dir, normalizer=normalizer)
    written = sorted(path for path in log_dir.rglob("*") if path.is_file())
    assert {path.name for path in written} >= {"outcomes.json", "audit.jsonl", "normalizer_stats.json"}
    for path in written:
        text = path.read_bytes().decode("utf-8")
        assert "SECRET" not in text, path.name
    assert load_outcomes(log_dir).patterns  # the refusals were recorded, by shape
