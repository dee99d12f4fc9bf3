"""Rules from hostile sources: every bad rule or rules file is one `RuleError` naming it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pydantic_lenient.normalizer.engine import MAX_RULES_FILE_BYTES, Normalizer, Rule, RuleError


def _rule(**fields: Any) -> dict[str, Any]:
    return {"id": "x", "tools": ["t"], **fields}


class Sly(str):
    """A str subclass with its own repr, equality and hash: it must not pass for a name."""

    def __repr__(self) -> str:
        return "__import__('os').system('touch pwned')"

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (_rule(type="param_alias", **{"from": "a", "to": "a"}), "rule 'x': from and to are the same name"),
        (
            _rule(type="nested_alias", in_payload="p", array_path="[]", **{"from": "a", "to": "a"}),
            "rule 'x': from and to are the same name",
        ),
        (_rule(type="type_coerce", **{"from": "a", "coerce_to": ["bool"]}), "rule 'x': coerce_to must be one of"),
        (_rule(type="type_coerce", **{"from": "a", "coerce_to": {"a": 1}}), "rule 'x': coerce_to must be one of"),
        (_rule(type="json_accept_both", **{"from": "a", "coerce_to": "bool"}), "coerce_to must be one of json, string"),
        (_rule(type=["param_alias"], **{"from": "a", "to": "b"}), "rule 'x': unknown type"),
        (_rule(type="param_alias", **{"from": 1, "to": "b"}), "rule 'x': from must be a non-empty string"),
        (_rule(type="param_alias", **{"from": "", "to": "b"}), "rule 'x': from must be a non-empty string"),
        (_rule(type="param_alias", **{"from": None, "to": "b"}), "rule 'x': from must be a non-empty string, not null"),
        (_rule(type="param_alias", tools=["t", 3], **{"from": "a", "to": "b"}), "rule 'x': tools must be"),
        (_rule(type="param_alias", tools=[], **{"from": "a", "to": "b"}), "rule 'x': tools must be"),
        (_rule(type="nested_alias", in_payload="p", array_path=["[]"], **{"from": "a", "to": "b"}), "bad array_path"),
        (_rule(type="param_default", **{"from": "a", "value": float("nan")}), "value holds NaN"),
        (_rule(type="param_default", **{"from": "a", "value": {1: "a"}}), "object key that is not a string"),
        (_rule(type="param_default", **{"from": "a", "value": (1, 2)}), "must be a JSON value, not tuple"),
        (_rule(type="param_default", **{"from": "a", "value": 10**5000}), "integer too large"),
        ({"id": 7, "tools": ["t"], "type": "param_alias", "from": "a", "to": "b"}, "rule #0: id must be"),
        ({"id": Sly("x"), "tools": ["t"], "type": "param_alias", "from": "a", "to": "b"}, "rule #0: id must be"),
        (_rule(type="param_alias", **{"from": Sly("a"), "to": "b"}), "rule 'x': from must be a non-empty string"),
        (_rule(type="param_alias", tools=[Sly("t")], **{"from": "a", "to": "b"}), "rule 'x': tools must be"),
        ({"id": "x", "tools": ["t"], "type": "param_alias", "from": "a", "to": "b", 5: 1}, "unknown field"),
        ([1, 2], "rule #0: a rule must be a JSON object, not list"),
    ],
    ids=lambda value: f"{value!r:.60}" if isinstance(value, str) else None,
)
def test_a_rule_that_cannot_mean_anything_is_a_rule_error(rule: Any, message: str) -> None:
    with pytest.raises(RuleError, match=message.replace("(", r"\(").replace("[", r"\[")):
        Normalizer([rule])


def test_a_default_value_nested_beyond_the_limit_is_refused_without_recursion() -> None:
    value: Any = "leaf"
    for _ in range(100_000):
        value = [value]
    with pytest.raises(RuleError, match="value is nested deeper than 64 levels"):
        Normalizer([_rule(type="param_default", **{"from": "a", "value": value})])


def test_a_str_subclass_never_reaches_a_rule(tmp_path: Path) -> None:
    with pytest.raises(RuleError):
        Rule(Sly("evil"), ("t",), "param_alias", from_="a", to="b")
    with pytest.raises(RuleError):
        Rule("ok", ("t",), "param_alias", from_=Sly("a"), to="b")
    with pytest.raises(RuleError):
        Rule("ok", ("t",), Sly("param_alias"), from_="a", to="b")  # type: ignore[arg-type]
    assert not (tmp_path / "pwned").exists()


def test_a_json_null_default_is_a_value() -> None:
    normalizer = Normalizer([_rule(type="param_default", **{"from": "a", "value": None})])
    assert normalizer.apply("t", {}).arguments == {"a": None}
    assert normalizer.rules[0].to_dict()["value"] is None


def _nested_json(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x00\x01\xff\xfe binary", "not UTF-8"),
        ("[{}]".encode("utf-16"), "not UTF-8"),
        (
            b"[" + b'{"id": "x", "tools": ["t"], "type": "param_default", "from": "a", "value": ' + b"1" * 5000 + b"}]",
            "not valid JSON",
        ),
        (
            b'[{"id": "x", "tools": ["t"], "type": "param_default", "from": "a", "value": '
            + _nested_json(100_000).encode()
            + b"}]",
            "nested too deeply",
        ),
        (_nested_json(100_000).encode(), "nested too deeply"),
        (b'[{"id": "x", "tools": ["t"], "type": "param_default", "from": "a", "value": NaN}]', "NaN is not JSON"),
        (
            b'[{"id": "x", "tools": ["t"], "type": "param_alias", "from": "a", "from": "b", "to": "c"}]',
            "the key 'from' appears twice",
        ),
        (
            b'[{"id": "x", "tools": ["t"], "type": "param_alias", "from": "a", "to": "a"}]',
            "rule 'x': from and to are the same name",
        ),
        (
            b'[{"id": "x", "tools": ["t"], "type": "type_coerce", "from": "a", "coerce_to": ["bool"]}]',
            "rule 'x': coerce_to must be one of bool, float, int",
        ),
        (b'[{"tools": ["t"], "type": "param_alias", "from": "a", "to": "b"}]', "rule #0: id must be"),
        (
            b'[{"id": "x", "tools": ["t"], "type": "param_default", "from": "a", "value": 1e999}]',
            "the number '1e999' is out of range",
        ),
        (b'{"rules": 5}', "rules must be a JSON list"),
        (b"42", "rules must be a JSON list"),
        (b"", "not valid JSON"),
    ],
    ids=lambda value: f"{value!r:.40}",
)
def test_a_bad_rules_file_is_a_rule_error_naming_it(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "rules.json"
    path.write_bytes(content)
    with pytest.raises(RuleError) as raised:
        Normalizer.from_file(path)
    assert str(raised.value).startswith(f"{path}: ")
    assert message in str(raised.value)
    assert len(str(raised.value)) < 300


def test_an_oversized_rules_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    with path.open("wb") as file:
        file.truncate(MAX_RULES_FILE_BYTES + 1)
    with pytest.raises(RuleError, match="larger than"):
        Normalizer.from_file(path)


def test_a_utf8_bom_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([_rule(type="param_alias", **{"from": "a", "to": "b"})]).encode())
    assert Normalizer.from_file(path).apply("t", {"a": 1}).arguments == {"b": 1}


def test_a_large_rule_set_loads_and_counts(tmp_path: Path) -> None:
    rules = [_rule(id=f"d{n}", type="param_default", **{"from": f"p{n}", "value": n}) for n in range(20_000)]
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules))
    normalizer = Normalizer.from_file(path)
    result = normalizer.apply("t", {"p0": "sent"})
    assert len(result.arguments) == 20_000
    assert result.arguments["p19999"] == 19_999
    stats = normalizer.stats()
    assert stats["by_rule"]["d19999"]["hits"] == 1
    assert "d0" not in stats["by_rule"]
