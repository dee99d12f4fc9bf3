"""Repair reads every pattern exactly as ECMA-262 with the ``u`` flag, as JS hosts do.

Two oracles: regress (an ECMA-262 engine, in process, on patterns that cannot run away) and Ajv 8
itself (node), on the same table.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
import regress
from hypothesis import given
from hypothesis import strategies as st

from pydantic_lenient.repair.engine import Repairer
from pydantic_lenient.schema.ecma_regex import translate
from tests.conftest import AjvRunner

# Patterns where a non-ECMA engine would read something differently, and plain ones.
PATTERNS = [
    "^.$",
    "^.+$",
    "^.*$",
    "\\bx",
    "x\\b",
    "x\\B",
    "\\B",
    "^[^]$",
    "[]",
    "^[^]*$",
    "^[\\b]$",
    "^\\0$",
    "[\\0]",
    "^\\uD83D\\uDE00$",
    "^[\\uD83D\\uDE00-\\uD83D\\uDE4F]$",
    "^\\u{1F600}$",
    "^\\u00e9$",
    "^\\w+$",
    "^\\W$",
    "^[^\\w]$",
    "^[\\w-]+$",
    "^\\s$",
    "^\\S$",
    "^[\\s]$",
    "^[^\\s]$",
    "^\\d$",
    "^\\D$",
    "^[\\D]$",
    "^[^\\D]$",
    "^[\\W\\d]$",
    "^\\p{L}$",
    "^\\P{L}$",
    "^\\p{Lu}\\p{Ll}*$",
    "^\\p{Script=Greek}$",
    "^\\p{sc=Latn}$",
    "^\\p{General_Category=Nd}$",
    "^\\p{ASCII}$",
    "^\\p{Any}$",
    "^a$",
    "^[a-z]+$",
    "(?=a)a",
    "(?!a).",
    "^(?:a|b)*c?$",
    "^[\\-a]$",
    "^\\/$",
    "^\\cJ$",
    "^\\x41$",
    "^\\v$",
    "^\\t\\n\\f\\r$",
    "^[^\\]]$",
    "^[\\]]$",
    "a{2,3}",
    "^\\$$",
    "^[.]$",
    "^\\.$",
    "^(?<n>a)b$",
    "^[\\u2028]$",
    "^[0-9]+$",
    "^-?(?:0|[1-9][0-9]*)$",
    "^[^\\n]*$",
    "a|^$",
    "^(?:(?=[a-z])\\w)+$",
]
STRINGS = [
    "",
    "a",
    "b",
    "c",
    "x",
    "ax",
    "éx",
    "x!",
    "xé",
    "é",
    "É",
    "A",
    "Ab",
    "aa",
    "aaa",
    "ab",
    "abc",
    "aab",
    "a\n",
    "\na",
    "\r",
    "\n",
    "\r\n",
    "\u2028",
    "\u2029",
    "\u0085",
    "\ufeff",
    "\u00a0",
    "\b",
    "\0",
    "\x0b",
    "\t\n\f\r",
    "\U0001f600",
    "\U0001f64f",
    "\U0001f650",
    "ÿ",
    "\u03b1",  # Greek alpha
    "ß",
    "\u017f",  # long s, which case folding makes an s
    "K",
    "-",
    "/",
    "]",
    "$",
    ".",
    "\u0663",
    "1",
    "12",
    "-0",
    "007",
    "_",
    " ",
    "\t",
    "A",
    "a-b_c",
    "100\n",
]


@functools.cache
def _repairer(pattern: str) -> Repairer:
    return Repairer({"type": "string", "pattern": pattern})


def _ecma(pattern: str, text: str) -> bool:
    return regress.Regex(pattern, "u").find(text) is not None


def test_every_pattern_in_the_table_is_read_exactly_not_refused() -> None:
    assert [pattern for pattern in PATTERNS if translate(pattern).pattern is None] == []


@pytest.mark.parametrize("pattern", PATTERNS)
def test_patterns_read_as_regress_reads_them(pattern: str) -> None:
    repairer = _repairer(pattern)
    assert [repairer.is_valid(text) for text in STRINGS] == [_ecma(pattern, text) for text in STRINGS]


_TRICKY = "aAbxéÉ_0 9-\n\r\t\u2028\u2029\u00a0\ufeff\u0085\b\0\U0001f600\u03b1.$/]"


@given(pattern=st.sampled_from(PATTERNS), text=st.text(alphabet=_TRICKY, max_size=6))
def test_any_string_is_read_as_regress_reads_it(pattern: str, text: str) -> None:
    assert _repairer(pattern).is_valid(text) == _ecma(pattern, text)


def test_patterns_read_as_ajv_reads_them(ajv: AjvRunner) -> None:
    cases = [
        {"schema": {"type": "string", "pattern": pattern}, "values": STRINGS, "draft": "2020-12"}
        for pattern in PATTERNS
    ]
    for pattern, result in zip(PATTERNS, ajv(cases), strict=True):
        assert result["compile_error"] is None, pattern
        assert [_repairer(pattern).is_valid(text) for text in STRINGS] == result["verdicts"], pattern


INVALID = ["(", "^]$", "a{2,1}", "\\p{letter}", "[\\d-x]", "{", "\\k", "(?<n>a)(?<n>b)"]


def test_invalid_patterns_are_invalid_for_ajv_too(ajv: AjvRunner) -> None:
    cases = [
        {"schema": {"type": "string", "pattern": pattern}, "values": [], "draft": "2020-12"} for pattern in INVALID
    ]
    refused_by_ajv = [result["compile_error"] is not None for result in ajv(cases)]
    assert refused_by_ajv == [Repairer({"pattern": pattern}).schema_error is not None for pattern in INVALID]
    assert all(refused_by_ajv)


UNDECIDABLE: list[tuple[str, str]] = [
    ("^(a)\\1$", "backreference"),
    ("\\k<n>(?<n>a)", "backreference"),
    ("(?<=a)b", "lookbehind"),
    ("(?<!a)b", "lookbehind"),
    ("\\uD800", "lone surrogate"),
    ("a" * 10_001, "longer than"),
]


@pytest.mark.parametrize(("pattern", "reason"), UNDECIDABLE)
def test_what_cannot_be_read_exactly_decides_nothing(pattern: str, reason: str) -> None:
    translation = translate(pattern)
    assert translation.pattern is None
    assert not translation.invalid
    assert reason in str(translation.problem)
    result = Repairer({"type": "string", "pattern": pattern}).repair("x")
    assert result.valid is False
    assert reason in result.reasons[0]["message"]
    assert Repairer({"type": ["string", "integer"], "pattern": pattern}).is_valid(1)  # no string, nothing to decide


def test_pattern_messages_name_the_pattern_as_written() -> None:
    result = Repairer({"properties": {"a": {"type": "string", "pattern": "^.$"}}}).repair({"a": "ab"})
    assert result.reasons == ({"path": "/a", "message": '"ab" does not match "^.$"'},)


def test_no_schema_pattern_reaches_pythons_re(monkeypatch: pytest.MonkeyPatch) -> None:
    """python-jsonschema falls back to ``re`` in places; repair never hands it a schema's pattern."""
    import re

    seen: list[str] = []
    for name in ("compile", "search", "match", "fullmatch"):
        original = getattr(re, name)

        def spy(pattern: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            seen.append(str(pattern))
            return _original(pattern, *args, **kwargs)

        monkeypatch.setattr(re, name, spy)
    marker = "^zz\\p{L}(?:q|r)$"
    schema = {
        "properties": {
            "a": {"type": "string", "pattern": marker},
            "b": {"$schema": "http://json-schema.org/draft-07/schema#", "pattern": marker},
        },
        "patternProperties": {marker: {"type": "integer"}},
        "additionalProperties": {"propertyNames": {"pattern": marker}},
    }
    result = Repairer(schema).repair({"a": "zzéq", "b": "x", "zzér": "1", "other": {"k": 1}})
    assert result.arguments["zzér"] == 1
    assert not [pattern for pattern in seen if "zz" in pattern]
