"""Each host profile does what its sources report, case by case (the sources are cited in each module)."""

from __future__ import annotations

from typing import Any

import pytest

from pydantic_lenient.hosts import PROFILES, profile, profile_for_client
from pydantic_lenient.hosts._ajv import AjvOptions, ajv_validate, js_number_from_string
from pydantic_lenient.hosts.codex import lower_like_codex
from pydantic_lenient.hosts.gemini import gemini_api_refusals


def _tool(prop: dict[str, Any], *, required: bool = False) -> dict[str, Any]:
    return {"type": "object", "properties": {"value": prop}, **({"required": ["value"]} if required else {})}


def _send(host: str, prop: dict[str, Any], arguments: dict[str, Any]) -> Any:
    profiled = profile(host)
    listing = profiled.listing(_tool(prop))
    assert listing.accepted, listing.reasons
    return profiled.call(listing, arguments)


def test_cursor_refuses_every_value_of_a_type_array_as_in_issue_3778() -> None:
    call = _send("cursor", {"type": ["null", "string"]}, {"value": "optional-value"})
    assert call.refusal == "Parameter 'value' must be of type null,string, got string"


def test_cursor_compares_anyof_branch_types_with_typeof_as_quoted_in_issue_3540() -> None:
    assert not _send("cursor", {"anyOf": [{"type": "integer"}, {"type": "null"}]}, {"value": 100}).sent
    assert _send("cursor", {"anyOf": [{"type": "number"}, {"type": "null"}]}, {"value": 100}).sent
    assert _send("cursor", {"anyOf": [{"type": "number"}, {"type": "null"}]}, {"value": None}).sent
    assert _send("cursor", {"type": "integer"}, {"value": 100}).sent  # the exception outside anyOf
    assert not _send("cursor", {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]}, {"value": {"x": 1}}).sent


def test_cursor_sends_an_unset_nullable_as_empty_text_as_in_issue_3614() -> None:
    call = _send("cursor", {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None}, {})
    assert call.arguments == {"value": ""}
    assert _send("inspector", {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None}, {}).arguments == {}


def test_vs_code_coerces_null_to_zero_in_an_anyof_and_nullable_stops_it() -> None:
    plain = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert _send("vscode", plain, {"value": None}).arguments == {"value": 0}
    guarded = {"anyOf": [{"type": "number", "nullable": True}, {"type": "null", "nullable": True}]}
    assert _send("vscode", guarded, {"value": None}).arguments == {"value": None}


def test_vs_code_refuses_an_array_without_items() -> None:
    listing = profile("vscode").listing(_tool({"type": "array"}))
    assert not listing.accepted
    assert "must have items" in listing.reasons[0]


@pytest.mark.parametrize(
    ("prop", "refused"),
    [
        ({"type": ["string", "null"]}, False),
        ({"type": ["integer", "string", "null"]}, True),  # gemini-cli#21094
        ({"type": "array", "items": {"type": ["object", "null"]}}, True),  # copilot-cli#4623
        ({"type": "array", "items": {"type": "integer", "enum": [1, 2]}}, True),  # copilot-cli#4835
        ({"type": "integer", "enum": [0, 1]}, True),  # gemini-cli#4415
        ({"type": "string", "enum": ["a", "b"]}, False),
        ({"type": "array"}, True),
        ({"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]}, True),  # gitlab-mcp#166: a branch without type
        ({"type": "object", "properties": {"value": True}}, True),  # copilot-cli#4623: a boolean schema
    ],
)
def test_the_gemini_api_rules(prop: dict[str, Any], refused: bool) -> None:
    assert bool(gemini_api_refusals(_tool(prop))) is refused


def test_gemini_cli_rewrites_only_two_entry_null_type_arrays_then_validates_without_coercion() -> None:
    gemini = profile("gemini-cli")
    listing = gemini.listing(_tool({"type": ["integer", "null"]}))
    assert listing.schema["properties"]["value"] == {"type": "integer", "nullable": True}
    assert gemini.call(listing, {"value": None}).arguments == {"value": None}
    assert not gemini.call(listing, {"value": "5"}).sent
    assert gemini.listing(_tool({"type": ["integer", "string", "null"]})).takes_down_every_tool


def test_qwen_code_repairs_after_a_failed_validation_only() -> None:
    assert _send("qwen-code", {"type": "boolean"}, {"value": "FALSE"}).arguments == {"value": False}
    assert _send("qwen-code", {"type": "integer"}, {"value": "12"}).arguments == {"value": 12}
    assert _send("qwen-code", {"type": "string"}, {"value": 12}).arguments == {"value": "12"}
    assert _send("qwen-code", {"type": "array", "items": {"type": "string"}}, {"value": '["a"]'}).arguments == {
        "value": ["a"]
    }
    assert not _send("qwen-code", {"type": "integer"}, {"value": "1e3"}).sent


def test_codex_lowers_the_schema_and_sends_nullable_arrays_as_json_text() -> None:
    lowered = lower_like_codex(_tool({"type": "integer", "minimum": 1, "maximum": 5, "default": 2}))
    assert lowered["properties"]["value"] == {"type": "integer"}
    assert lower_like_codex({"type": "object", "properties": {"v": {"const": "x"}}})["properties"]["v"] == {
        "enum": ["x"],
        "type": "string",
    }
    assert _send("codex", {"type": ["array", "null"], "items": {"type": "string"}}, {"value": ["a"]}).arguments == {
        "value": '["a"]'
    }


def test_claude_code_converts_by_the_top_level_type_and_the_reports_disagree_behind_anyof() -> None:
    behind = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert _send("claude-code", {"type": "integer"}, {"value": 5}).arguments == {"value": 5}
    assert _send("claude-code", behind, {"value": 5}).arguments == {"value": "5"}  # #18260, #73137
    assert _send("claude-code+parsed", behind, {"value": 5}).arguments == {"value": 5}  # #82652
    assert not profile("claude-desktop").listing({"anyOf": [{"type": "object"}]}).accepted


def test_client_names_find_their_profile_and_every_name_is_one_hosts() -> None:
    assert profile_for_client("claude-code") is PROFILES["claude-code"]
    assert profile_for_client("Visual Studio Code") is PROFILES["vscode"]
    assert profile_for_client("gemini-cli-mcp-client") is PROFILES["gemini-cli"]
    assert profile_for_client("codex-mcp-client") is PROFILES["codex"]
    assert profile_for_client("qwen-cli-mcp-client-my-server") is PROFILES["qwen-code"]
    assert profile_for_client("some-unknown-client") is None
    names = [name for host in PROFILES.values() for name in host.client_names]
    assert len(names) == len(set(names))
    with pytest.raises(KeyError, match="unknown host"):
        profile("nope")


def test_ajv_coercion_follows_the_schema_type_order() -> None:
    coerce = AjvOptions(coerce_types=True)
    assert ajv_validate({"type": ["null", "integer"]}, "", coerce) == (True, None)
    assert ajv_validate({"type": ["integer", "null"]}, "", coerce) == (True, None)  # "" is no integer
    assert ajv_validate({"type": "integer"}, " 12 ", coerce) == (True, 12)
    assert ajv_validate({"type": "string"}, 1.5, coerce) == (True, "1.5")
    assert ajv_validate({"type": "boolean"}, "true", AjvOptions()) == (False, "true")
    assert js_number_from_string("0x1A") == 26
    assert js_number_from_string("\u0663") != js_number_from_string("\u0663")  # NaN: JS reads no Arabic-Indic digit


def test_hostile_depth_and_reference_cycles_end_in_a_refusal_on_every_host() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    cycle = {
        "type": "object",
        "properties": {"value": {"$ref": "#/$defs/Loop"}},
        "$defs": {"Loop": {"$ref": "#/$defs/Loop"}},
    }
    for host in PROFILES.values():
        listing = host.listing(_tool({"type": "array", "items": {}}))
        call = host.call(listing, {"value": deep})
        assert call.sent or call.refusal, host.name
        looped = host.listing(cycle)
        if looped.accepted:
            host.call(looped, {"value": 1})  # ends, sent or refused
