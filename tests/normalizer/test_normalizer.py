from __future__ import annotations

import copy
import json
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import AliasChoices, BaseModel, Field, ValidationError

from pydantic_lenient import LenientUInt, StrictBoolish
from pydantic_lenient.normalizer.appliers import RULE_APPLIERS
from pydantic_lenient.normalizer.engine import (
    BUILTIN_RULES,
    OTHER_TOOLS,
    NormalizationConflict,
    Normalizer,
    NormalizeResult,
    Rule,
    RuleError,
    rules_from_model,
)
from pydantic_lenient.normalizer.rules import RULE_SHAPES, RULE_TYPES
from tests.strategies import json_values

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FS = Normalizer.from_file(EXAMPLES / "fs_rules.json")


def _rule(**fields: Any) -> dict[str, Any]:
    return {"id": "r", "tools": ["t"], **fields}


ALIAS = _rule(type="param_alias", **{"from": "old_str", "to": "old_text"})
DEFAULT = _rule(type="param_default", **{"from": "limit", "value": 10})
PAYLOAD = {"in_payload": "pipeline_json", "array_path": "steps[]"}


@pytest.mark.parametrize(
    ("rule", "arguments", "expected"),
    [
        (ALIAS, {"old_str": "a"}, {"old_text": "a"}),
        (ALIAS, {"old_text": "a"}, {"old_text": "a"}),
        (ALIAS, {"old_str": "a", "old_text": "a"}, {"old_text": "a"}),
        (DEFAULT, {}, {"limit": 10}),
        (DEFAULT, {"limit": None}, {"limit": None}),
        (DEFAULT, {"limit": 0}, {"limit": 0}),
        (_rule(type="type_coerce", **{"from": "f", "coerce_to": "bool"}), {"f": "TRUE"}, {"f": True}),
        (_rule(type="type_coerce", **{"from": "f", "coerce_to": "bool"}), {"f": "0"}, {"f": False}),
        (_rule(type="type_coerce", **{"from": "f", "coerce_to": "bool"}), {"f": "yes"}, {"f": "yes"}),
        (_rule(type="type_coerce", **{"from": "f", "coerce_to": "bool"}), {"f": ""}, {"f": ""}),
        (_rule(type="type_coerce", **{"from": "f", "coerce_to": "bool"}), {"f": 1}, {"f": 1}),
        (_rule(type="type_coerce", **{"from": "n", "coerce_to": "int"}), {"n": "-42"}, {"n": -42}),
        (_rule(type="type_coerce", **{"from": "n", "coerce_to": "int"}), {"n": " 4"}, {"n": " 4"}),
        (_rule(type="type_coerce", **{"from": "n", "coerce_to": "int"}), {"n": "\u0663"}, {"n": "\u0663"}),
        (_rule(type="type_coerce", **{"from": "n", "coerce_to": "int"}), {"n": "1.0"}, {"n": "1.0"}),
        (_rule(type="type_coerce", **{"from": "x", "coerce_to": "float"}), {"x": "2.5e1"}, {"x": 25.0}),
        (_rule(type="type_coerce", **{"from": "x", "coerce_to": "float"}), {"x": "1e999"}, {"x": "1e999"}),
        (_rule(type="type_coerce", **{"from": "x", "coerce_to": "float"}), {"x": "NaN"}, {"x": "NaN"}),
        (_rule(type="json_accept_both", **{"from": "e"}), {"e": [{"b": 1, "a": "é"}]}, {"e": '[{"b":1,"a":"é"}]'}),
        (_rule(type="json_accept_both", **{"from": "e"}), {"e": "[1]"}, {"e": "[1]"}),
        (_rule(type="json_accept_both", **{"from": "e", "coerce_to": "json"}), {"e": '{"a": [1]}'}, {"e": {"a": [1]}}),
        (_rule(type="json_accept_both", **{"from": "e", "coerce_to": "json"}), {"e": "not json"}, {"e": "not json"}),
        (_rule(type="json_accept_both", **{"from": "e", "coerce_to": "json"}), {"e": "42"}, {"e": "42"}),
        (
            _rule(type="nested_alias", **PAYLOAD, **{"from": "type", "to": "action"}),
            {"pipeline_json": {"steps": [{"type": "a"}, "not an object", {"action": "b"}]}},
            {"pipeline_json": {"steps": [{"action": "a"}, "not an object", {"action": "b"}]}},
        ),
        (
            _rule(type="nested_default", **PAYLOAD, **{"from": "id", "value": "step-{{index}}"}),
            {"pipeline_json": '{"steps": [{}, 7, {"id": "mine"}, {"id": null}, {}]}'},
            {"pipeline_json": '{"steps":[{"id":"step-0"},7,{"id":"mine"},{"id":null},{"id":"step-4"}]}'},
        ),
        (
            _rule(type="nested_alias", **{"in_payload": "p", "array_path": "[]", "from": "a", "to": "b"}),
            {"p": '[{"a": 1}]'},
            {"p": '[{"b":1}]'},
        ),
        (
            _rule(type="nested_alias", **{"in_payload": "p", "array_path": "data.items[]", "from": "a", "to": "b"}),
            {"p": {"data": {"items": [{"a": 1}]}}},
            {"p": {"data": {"items": [{"b": 1}]}}},
        ),
        (
            _rule(type="nested_alias", **PAYLOAD, **{"from": "a", "to": "b"}),
            {"pipeline_json": "{oops"},
            {"pipeline_json": "{oops"},
        ),
    ],
    ids=lambda value: f"{value!r:.50}" if not isinstance(value, dict) or "id" not in value else value["type"],
)
def test_each_rule_type(rule: dict[str, Any], arguments: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(arguments)
    result = Normalizer([rule]).apply("t", arguments)
    assert result.arguments == expected
    assert arguments == before  # the input is never mutated
    assert bool(result.applied) == (expected != arguments)


def test_every_rule_type_has_one_shape_and_one_applier() -> None:
    # The record checks a rule by its type's shape and the engine applies it by its type's class:
    # a type listed in one place and not the other would load and then fail at its first call.
    assert set(RULE_SHAPES) == set(RULE_TYPES) == set(RULE_APPLIERS)


def test_text_payload_that_no_rule_changes_is_kept_byte_for_byte() -> None:
    text = '{ "steps" : [ {"action": "x", "id": "a"} ] }'
    assert FS.apply("batch_operations", {"pipeline_json": text}).arguments["pipeline_json"] == text


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"id": "x", "tools": ["t"], "type": "rename"}, "rule 'x': unknown type 'rename'"),
        ({"id": "x", "tools": ["t"], "type": "param_alias", "from": "a"}, "rule 'x': a param_alias rule needs to"),
        (
            {"id": "x", "tools": ["t"], "type": "param_default", "from": "a", "value": 1, "to": "b"},
            "rule 'x': a param_default rule does not take to",
        ),
        ({"id": "x", "tools": ["t"], "type": "param_alias", "from": "a", "to": "b", "extra": 1}, "unknown field"),
        (
            {
                "id": "x",
                "tools": ["t"],
                "type": "nested_alias",
                "in_payload": "p",
                "array_path": "steps",
                "from": "a",
                "to": "b",
            },
            "rule 'x': bad array_path 'steps'",
        ),
        ({"id": "x", "tools": ["t"], "type": "type_coerce", "from": "a", "coerce_to": "date"}, "coerce_to must be"),
        ({"id": "x", "tools": "t", "type": "param_alias", "from": "a", "to": "b"}, "tools must be"),
        ({"id": "", "tools": ["t"], "type": "param_alias", "from": "a", "to": "b"}, "id must be"),
        ("not a rule", "must be a JSON object"),
    ],
)
def test_loading_refuses_bad_rules_naming_them(rule: Any, message: str) -> None:
    with pytest.raises(RuleError, match=message):
        Normalizer([rule])


def test_duplicate_ids_and_bad_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="rule 'r': duplicate id"):
        Normalizer([ALIAS, ALIAS])
    with pytest.raises(RuleError, match="not valid JSON"):
        Normalizer.from_json("[{")
    with pytest.raises(RuleError, match="JSON list of rules"):
        Normalizer.from_json('{"rule": []}')
    with pytest.raises(RuleError, match="cannot read rules"):
        Normalizer.from_file(tmp_path / "missing.json")


def test_rules_load_from_file_string_and_python_alike(tmp_path: Path) -> None:
    rules = [Rule.from_dict(ALIAS), Rule.from_dict(DEFAULT | {"id": "d"})]
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([rule.to_dict() for rule in rules]))
    loaded = [
        Normalizer(rules),
        Normalizer([ALIAS, DEFAULT | {"id": "d"}]),
        Normalizer.from_file(path),
        Normalizer.from_json(json.dumps({"rules": [ALIAS, DEFAULT | {"id": "d"}]})),
    ]
    assert all(normalizer.rules == loaded[0].rules for normalizer in loaded)
    assert [rule.to_dict() for rule in loaded[0].rules] == [ALIAS, DEFAULT | {"id": "d"}]


def test_alias_conflicts_are_errors_unless_keep_target_is_chosen() -> None:
    with pytest.raises(NormalizationConflict, match="the call has both 'old_str' \\('a'\\) and 'old_text'"):
        Normalizer([ALIAS]).apply("t", {"old_str": "a", "old_text": "b"})
    result = Normalizer([ALIAS], on_conflict="keep_target").apply("t", {"old_str": "a", "old_text": "b"})
    assert result.arguments == {"old_text": "b"}
    assert result.applied == [
        {
            "rule_id": "r",
            "type": "param_alias",
            "param": "old_str",
            "from": "old_str",
            "to": "old_text",
            "note": "conflict: kept old_text, dropped old_str='a'",
            "dropped": "a",
        }
    ]
    nested = _rule(type="nested_alias", **PAYLOAD, **{"from": "type", "to": "action"})
    with pytest.raises(NormalizationConflict, match=r"item 0 of pipeline_json\.steps"):
        Normalizer([nested]).apply("t", {"pipeline_json": {"steps": [{"type": "a", "action": "b"}]}})


@pytest.mark.parametrize("as_text", [False, True], ids=["structure", "json-text"])
def test_a_nested_conflict_under_keep_target_records_what_it_dropped(as_text: bool) -> None:
    nested = _rule(type="nested_alias", **PAYLOAD, **{"from": "type", "to": "action"})
    steps = [{"type": "search"}, {"type": "delete", "action": "search"}, {"type": "x", "action": "x"}]
    payload = json.dumps({"steps": steps}) if as_text else {"steps": steps}
    result = Normalizer([nested], on_conflict="keep_target").apply("t", {"pipeline_json": payload})
    output = result.arguments["pipeline_json"]
    assert (json.loads(output) if as_text else output) == {
        "steps": [{"action": "search"}, {"action": "search"}, {"action": "x"}]
    }
    assert result.applied == [
        {"rule_id": "r", "type": "nested_alias", "param": "pipeline_json.steps[].type", "from": "type", "to": "action"},
        {
            "rule_id": "r",
            "type": "nested_alias",
            "param": "pipeline_json.steps[1].type",
            "from": "type",
            "to": "action",
            "note": "conflict: kept action, dropped type='delete'",
            "dropped": "delete",
        },
        {
            "rule_id": "r",
            "type": "nested_alias",
            "param": "pipeline_json.steps[2].type",
            "from": "type",
            "to": "action",
            "note": "same value sent under both names; kept one",
            "dropped": "x",
        },
    ]
    assert steps[1] == {"type": "delete", "action": "search"}  # the input is untouched


def test_builtin_rules_apply_first_and_the_library_ships_none() -> None:
    assert BUILTIN_RULES == ()
    coerce_new_name = _rule(id="c", type="type_coerce", **{"from": "old_text", "coerce_to": "int"})
    normalizer = Normalizer([coerce_new_name], builtin=[Rule.from_dict(ALIAS)])
    result = normalizer.apply("t", {"old_str": "5"})
    assert result.arguments == {"old_text": 5}
    assert [entry["rule_id"] for entry in result.applied] == ["r", "c"]


def test_wildcard_and_named_tools() -> None:
    rules = [_rule(id="all", tools=["*"], type="param_default", **{"from": "a", "value": 1}), ALIAS]
    normalizer = Normalizer(rules)
    assert normalizer.apply("other", {"old_str": "x"}).arguments == {"old_str": "x", "a": 1}
    assert normalizer.apply("t", {"old_str": "x"}).arguments == {"old_text": "x", "a": 1}


# The Go server's table, replayed against its 14 rules in examples/fs_rules.json.
REPLAY = [
    ("edit_file", {"path": "a", "old_str": "x", "new_str": "y"}, {"path": "a", "old_text": "x", "new_text": "y"}),
    ("delete_file", {"path": "a", "force": "true", "dry_run": "false"}, {"path": "a", "force": True, "dry_run": False}),
    (
        "multi_edit",
        {"path": "a", "edits_json": [{"old_text": "a", "new_text": "b"}]},
        {"path": "a", "edits_json": '[{"old_text":"a","new_text":"b"}]'},
    ),
    (
        "batch_operations",
        {"pipeline_json": '{"steps": [{"id": "s1", "type": "search"}]}'},
        {"pipeline_json": '{"steps":[{"id":"s1","action":"search"}]}'},
    ),
    (
        "batch_operations",
        {"pipeline_json": '{"steps": [{"action": "a"}, {"action": "b"}]}'},
        {"pipeline_json": '{"steps":[{"action":"a","id":"step-0"},{"action":"b","id":"step-1"}]}'},
    ),
    (
        "search_files",
        {"pattern": "x", "recursive": "TRUE", "count_only": "0", "include_context": "maybe"},
        {"pattern": "x", "recursive": True, "count_only": False, "include_context": "maybe"},
    ),
    (
        "list_directory",
        {"path": ".", "recursive": "false", "whole_word": "true"},
        {"path": ".", "recursive": False, "whole_word": "true"},
    ),
]


@pytest.mark.parametrize(("tool", "arguments", "expected"), REPLAY)
def test_the_go_servers_table_replays(tool: str, arguments: dict[str, Any], expected: dict[str, Any]) -> None:
    assert FS.apply(tool, arguments).arguments == expected
    assert len(FS.rules) == 14


@given(
    arguments=st.dictionaries(
        st.sampled_from(["old_str", "old_text", "force", "dry_run", "edits_json", "pipeline_json", "limit", "path"]),
        json_values,
        max_size=6,
    )
)
def test_for_every_call_input_is_untouched_and_no_value_is_lost(arguments: dict[str, Any]) -> None:
    before = copy.deepcopy(arguments)
    normalizer = Normalizer.from_file(EXAMPLES / "fs_rules.json", on_conflict="keep_target")
    for tool in ("edit_file", "multi_edit", "batch_operations", "delete_file"):
        result = normalizer.apply(tool, arguments)
        assert arguments == before
        dropped = [entry for entry in result.applied if "conflict" in entry.get("note", "")]
        # Every key survives (possibly renamed), unless a conflict dropped it, and says so.
        renamed = {entry["from"]: entry["to"] for entry in result.applied if entry["type"] == "param_alias"}
        for key in before:
            assert key in result.arguments or key in renamed, (tool, key)
        assert len(result.arguments) == len(before) - sum(
            1
            for entry in result.applied
            if entry["type"] == "param_alias" and entry["to"] in before and entry["from"] in before
        )
        assert all(entry["from"] in before for entry in dropped)


@given(value=json_values)
def test_a_default_never_overwrites_a_provided_value(value: Any) -> None:
    assert Normalizer([DEFAULT]).apply("t", {"limit": value}).arguments == {"limit": value}


def test_stats_have_the_documented_shape() -> None:
    normalizer = Normalizer([ALIAS])
    normalizer.register_tools(["u"])
    normalizer.apply("t", {"old_str": "a"})
    normalizer.apply("t", {"x": 1})
    normalizer.apply("u", {"old_str": "a"})
    stats = normalizer.stats()
    assert set(stats) == {
        "total_processed",
        "total_normalized",
        "last_updated",
        "by_tool",
        "by_rule",
        "recent_normalizations",
    }
    assert (stats["total_processed"], stats["total_normalized"]) == (3, 1)
    assert stats["by_tool"] == {"t": {"processed": 2, "normalized": 1}, "u": {"processed": 1, "normalized": 0}}
    assert stats["by_rule"] == {"r": {"rule_id": "r", "type": "param_alias", "hits": 1, "tools": ["t"]}}
    (recent,) = stats["recent_normalizations"]
    assert recent["tool"] == "t"
    assert recent["ts"].endswith("Z")
    assert recent["applied"][0]["rule_id"] == "r"


def test_recent_normalizations_are_bounded() -> None:
    normalizer = Normalizer([ALIAS])
    for index in range(Normalizer.recent_limit + 20):
        normalizer.apply("t", {"old_str": index})
    recent = normalizer.stats()["recent_normalizations"]
    assert len(recent) == Normalizer.recent_limit
    assert recent[-1]["applied"][0]["rule_id"] == "r"


def test_counts_stay_exact_under_concurrent_calls() -> None:
    normalizer = Normalizer([ALIAS | {"tools": ["*"]}])
    normalizer.register_tools(["tool0", "tool1"])
    threads, calls = 8, 2_000
    start = threading.Barrier(threads)

    def work(number: int) -> None:
        start.wait()
        for index in range(calls):
            normalizer.apply(f"tool{number % 2}", {"old_str": index} if index % 2 else {"other": index})

    workers = [threading.Thread(target=work, args=(number,)) for number in range(threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, so an unlocked update would race
    try:
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(interval)
    stats = normalizer.stats()
    total = threads * calls
    assert stats["total_processed"] == total
    assert stats["total_normalized"] == total // 2
    assert stats["by_rule"]["r"]["hits"] == total // 2
    assert stats["by_rule"]["r"]["tools"] in (["tool0", "tool1"], ["tool1", "tool0"])
    assert stats["by_tool"] == {
        name: {"processed": total // 2, "normalized": total // 4} for name in ("tool0", "tool1")
    }


def test_stats_save_atomically_and_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "stats" / "normalizer.json"
    first = Normalizer([ALIAS], stats_file=path)
    first.apply("t", {"old_str": "a"})
    first.close()
    names = sorted(item.name for item in path.parent.iterdir())
    assert names == [".normalizer.json.lock", "normalizer.json"]  # no temp files left
    second = Normalizer([ALIAS], stats_file=path)
    second.apply("t", {"old_str": "b"})
    stats = second.stats()
    assert stats["total_processed"] == 2
    assert stats["by_rule"]["r"]["hits"] == 2
    assert len(stats["recent_normalizations"]) == 2
    with pytest.raises(ValueError, match="no stats_file"):
        Normalizer().save()


def test_autosave_writes_the_file_periodically(tmp_path: Path) -> None:
    path = tmp_path / "auto.json"
    normalizer = Normalizer([ALIAS])
    normalizer.autosave(0.02, path)
    normalizer.apply("t", {"old_str": "a"})
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not (path.exists() and json.loads(path.read_text())["total_processed"]):
        time.sleep(0.01)
    normalizer.close()
    assert json.loads(path.read_text())["total_processed"] == 1
    with pytest.raises(ValueError, match="positive"):
        normalizer.autosave(0)


def test_a_normalizer_attached_to_a_model_runs_before_validation() -> None:
    @FS.attach("edit_file")
    class EditFile(BaseModel):
        """Edit a file."""

        path: str
        old_text: str
        new_text: str
        dry_run: StrictBoolish = True
        limit: LenientUInt = 0

    edit = EditFile.model_validate({"path": "a", "old_str": "x", "new_str": "y", "dry_run": "FALSE"})
    assert (edit.old_text, edit.new_text, edit.dry_run) == ("x", "y", False)
    assert EditFile.__name__ == "EditFile"
    assert EditFile.__doc__ == "Edit a file."
    assert list(EditFile.model_json_schema()["properties"]) == ["path", "old_text", "new_text", "dry_run", "limit"]
    with pytest.raises(ValidationError):
        EditFile.model_validate({"path": "a", "old_str": "x"})


def test_rules_derived_from_a_model() -> None:
    class Edit(BaseModel):
        old_text: str = Field(validation_alias=AliasChoices("old_text", "old_str", "oldText"))
        force: bool = False
        count: int = 0
        ratio: float = 1.0
        limit: LenientUInt = 0
        flag: StrictBoolish = False
        name: str = ""

    rules = rules_from_model(Edit, "edit")
    assert [(rule.type, rule.from_, rule.to or rule.coerce_to) for rule in rules] == [
        ("param_alias", "old_str", "old_text"),
        ("param_alias", "oldText", "old_text"),
        ("type_coerce", "force", "bool"),
        ("type_coerce", "count", "int"),
        ("type_coerce", "ratio", "float"),
    ]
    result = Normalizer(rules).apply("edit", {"oldText": "a", "force": "false", "count": "3"})
    assert result.arguments == {"old_text": "a", "force": False, "count": 3}


def test_each_normalized_call_logs_one_structured_record(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="pydantic_lenient.normalizer"):
        FS.apply("edit_file", {"old_str": "a", "new_str": "b"})
        FS.apply("edit_file", {"old_text": "a"})
    (record,) = caplog.records
    assert record.tool == "edit_file"  # type: ignore[attr-defined]
    assert record.rule_ids == ["edit-old_str", "edit-new_str"]  # type: ignore[attr-defined]
    assert "edit-old_str" in record.getMessage()


def test_a_conflicting_call_is_counted_as_processed() -> None:
    normalizer = Normalizer([ALIAS])
    with pytest.raises(NormalizationConflict):
        normalizer.apply("t", {"old_str": "a", "old_text": "b"})
    stats = normalizer.stats()
    assert (stats["total_processed"], stats["total_normalized"]) == (1, 0)


@pytest.mark.parametrize("name", ['a"b', "a'b", 'x\\"; raise SystemExit #', "line\nbreak", "ünï", "{{index}}"])
def test_any_parameter_name_is_just_a_name(name: str) -> None:
    rules = [
        {"id": f"alias {name}", "tools": ["t"], "type": "param_alias", "from": name, "to": name + "!"},
        {"id": f"coerce {name}", "tools": ["t"], "type": "type_coerce", "from": name + "!", "coerce_to": "int"},
        {"id": f"default {name}", "tools": ["t"], "type": "param_default", "from": name + "?", "value": name},
    ]
    result = Normalizer(rules).apply("t", {name: "7"})
    assert result.arguments == {name + "!": 7, name + "?": name}
    assert [entry["rule_id"] for entry in result.applied] == [rule["id"] for rule in rules]


@pytest.mark.parametrize(
    ("sent", "same"),
    [
        ({"old_str": 1, "old_text": True}, False),  # Python's == says 1 == True; JSON does not
        ({"old_str": [0], "old_text": [False]}, False),
        ({"old_str": {"a": 1}, "old_text": {"a": 1.0}}, True),  # one JSON number
        ({"old_str": [1, "a"], "old_text": [1, "a"]}, True),
    ],
    ids=repr,
)
def test_both_names_with_the_same_value_means_the_same_json_value(sent: dict[str, Any], same: bool) -> None:
    normalizer = Normalizer([ALIAS])
    if not same:
        with pytest.raises(NormalizationConflict):
            normalizer.apply("t", sent)
        return
    result = normalizer.apply("t", sent)
    assert result.arguments == {"old_text": sent["old_text"]}
    assert result.applied[0]["note"] == "same value sent under both names; kept one"
    nested = _rule(type="nested_alias", **PAYLOAD, **{"from": "old_str", "to": "old_text"})
    steps = Normalizer([nested]).apply("t", {"pipeline_json": {"steps": [sent]}}).arguments["pipeline_json"]["steps"]
    assert steps == [{"old_text": sent["old_str"]}]


@given(
    text=st.text(alphabet=st.sampled_from("truefalsTRUEFALS01 \u0130K\u0131\u212a"), max_size=6) | st.text(max_size=6)
)
def test_a_boolean_is_read_only_from_its_explicit_spellings(text: str) -> None:
    rule = _rule(type="type_coerce", **{"from": "f", "coerce_to": "bool"})
    spelled = text.lower() if text.isascii() else None  # "İ".lower() and the Kelvin sign must not count
    expected = {"true": True, "1": True, "false": False, "0": False}.get(spelled or "", text)
    assert Normalizer([rule]).apply("t", {"f": text}).arguments == {"f": expected}


def test_applied_is_built_once_and_hands_out_copies() -> None:
    rules = [DEFAULT | {"value": {"deep": [1]}}, ALIAS | {"id": "a"}]
    normalizer = Normalizer(rules)
    result = normalizer.apply("t", {"old_str": "x"})
    assert result.applied is result.applied
    assert result.applied == [
        {"rule_id": "r", "type": "param_default", "param": "limit", "from": None, "to": {"deep": [1]}},
        {"rule_id": "a", "type": "param_alias", "param": "old_str", "from": "old_str", "to": "old_text"},
    ]
    result.applied[0]["to"]["deep"].append(2)  # the caller's copy, not the rule's value
    result.arguments["limit"]["deep"].append(3)
    again = normalizer.apply("t", {})
    assert again.arguments == {"limit": {"deep": [1]}}
    assert again.applied[0]["to"] == {"deep": [1]}
    assert normalizer.stats()["recent_normalizations"][0]["applied"][0]["to"] == {"deep": [1]}
    assert repr(again) == f"NormalizeResult(arguments={again.arguments!r}, applied={again.applied!r})"
    assert NormalizeResult({"a": 1}, again.applied).applied == again.applied


def test_tools_no_rule_names_and_nobody_registered_share_one_bucket() -> None:
    normalizer = Normalizer(
        [_rule(tools=["*"], type="param_default", **{"from": "a", "value": 1}), ALIAS | {"id": "x"}]
    )
    for index in range(20_000):
        assert normalizer.apply(f"unknown{index}", {}).arguments == {"a": 1}
    assert normalizer._plans == {}  # invented tool names keep no state
    assert normalizer.apply("t", {"old_str": "s"}).arguments == {"old_text": "s", "a": 1}
    normalizer.register_tools(["registered"])
    normalizer.apply("registered", {})
    stats = normalizer.stats()
    assert stats["total_processed"] == stats["total_normalized"] == 20_002
    assert stats["by_tool"] == {
        OTHER_TOOLS: {"processed": 20_000, "normalized": 20_000},
        "t": {"processed": 1, "normalized": 1},
        "registered": {"processed": 1, "normalized": 1},
    }
    assert stats["by_rule"]["r"]["tools"] == [OTHER_TOOLS, "t", "registered"]
    assert stats["by_rule"]["x"]["tools"] == ["t"]
    assert {entry["tool"] for entry in stats["recent_normalizations"]} == {OTHER_TOOLS, "t", "registered"}
    assert len(json.dumps(stats)) < 20_000


def test_attach_registers_its_tool() -> None:
    normalizer = Normalizer([_rule(tools=["*"], type="param_default", **{"from": "a", "value": 1})])

    @normalizer.attach("mine")
    class Mine(BaseModel):
        a: int

    assert Mine.model_validate({}).a == 1
    assert normalizer.stats()["by_tool"] == {"mine": {"processed": 1, "normalized": 1}}
    with pytest.raises(TypeError, match="strings"):
        normalizer.register_tools([1])  # type: ignore[list-item]


def test_stats_count_every_rule_of_a_large_rule_set() -> None:
    # More rules than a machine word has bits: a call's signature is an unbounded int.
    rules = [
        _rule(id=f"d{n}", tools=["t", "u"], type="param_default", **{"from": f"p{n}", "value": n}) for n in range(70)
    ]
    normalizer = Normalizer(rules)
    normalizer.apply("t", {})
    normalizer.apply("u", {"p69": "sent"})
    normalizer.apply("u", {f"p{n}": n for n in range(70)})
    stats = normalizer.stats()
    assert stats["by_tool"] == {"t": {"processed": 1, "normalized": 1}, "u": {"processed": 2, "normalized": 1}}
    assert [stats["by_rule"][f"d{n}"]["hits"] for n in (0, 68, 69)] == [2, 2, 1]
    assert stats["by_rule"]["d69"]["tools"] == ["t"]
    assert [entry["rule_id"] for entry in stats["recent_normalizations"][1]["applied"]] == [f"d{n}" for n in range(69)]


def test_a_conflict_over_huge_values_still_reads_in_one_short_line() -> None:
    huge, deep = 10**5000, [[[[[["x" * 10_000]]]]]]
    with pytest.raises(NormalizationConflict) as raised:
        Normalizer([ALIAS]).apply("t", {"old_str": huge, "old_text": deep})
    assert len(str(raised.value)) < 300
    assert "<int too large to show>" in str(raised.value)
    result = Normalizer([ALIAS], on_conflict="keep_target").apply("t", {"old_str": huge, "old_text": deep})
    assert result.applied[0]["dropped"] is huge


def test_values_of_any_depth_never_overflow_the_stack() -> None:
    deep: Any = "leaf"
    for _ in range(100_000):
        deep = [deep]
    text = "[" * 100_000 + "]" * 100_000
    rules = [
        ALIAS | {"id": "alias"},
        _rule(id="text", type="json_accept_both", **{"from": "structure"}),
        _rule(id="json", type="json_accept_both", **{"from": "text", "coerce_to": "json"}),
        _rule(id="nested", type="nested_alias", **PAYLOAD, **{"from": "a", "to": "b"}),
    ]
    normalizer = Normalizer(rules, on_conflict="keep_target")
    call = {
        "old_str": deep,
        "old_text": [deep],
        "structure": deep,
        "text": text,
        "pipeline_json": {"steps": [{"a": deep, "b": deep}]},
    }
    result = normalizer.apply("t", call)
    assert result.arguments["structure"] is deep  # too deep to write as text: left as sent
    assert result.arguments["text"] == text  # too deep to read: left as sent
    assert result.arguments["pipeline_json"]["steps"][0]["b"] is deep
    assert [entry["rule_id"] for entry in result.applied] == ["alias", "nested"]
    assert result.applied[1]["dropped"] is deep
    with pytest.raises(NormalizationConflict):
        Normalizer(rules).apply("t", call)
