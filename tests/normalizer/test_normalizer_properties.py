"""For every call and every rule set: the input is untouched, and no value is lost.

Every value the call sent (payloads read as structure, whether they came as structure or as JSON
text) is in the normalized call, or named in a change record: the value a coercion replaced, or the
value an alias dropped because both names were sent.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pydantic_lenient.normalizer.engine import Normalizer
from tests.strategies import boolean_strings, json_values, number_strings

NAMES = ["a", "b", "c", "id"]
PAYLOAD = "p"
PATHS = ["[]", "steps[]", "data.steps[]"]


def _pair() -> st.SearchStrategy[tuple[str, str]]:
    return st.permutations(NAMES).map(lambda names: (names[0], names[1]))


def _rule(kind: str, draw: Any) -> dict[str, Any]:
    tools = draw(st.sampled_from([["t"], ["*"], ["t", "u"]]))
    if kind == "param_alias":
        source, target = draw(_pair())
        return {"tools": tools, "type": kind, "from": source, "to": target}
    if kind == "param_default":
        return {"tools": tools, "type": kind, "from": draw(st.sampled_from(NAMES)), "value": draw(json_values)}
    if kind == "type_coerce":
        coerce_to = draw(st.sampled_from(["bool", "int", "float"]))
        return {"tools": tools, "type": kind, "from": draw(st.sampled_from(NAMES)), "coerce_to": coerce_to}
    if kind == "json_accept_both":
        coerce_to = draw(st.sampled_from(["string", "json"]))
        return {"tools": tools, "type": kind, "from": draw(st.sampled_from([*NAMES, PAYLOAD])), "coerce_to": coerce_to}
    place = {"in_payload": PAYLOAD, "array_path": draw(st.sampled_from(PATHS))}
    if kind == "nested_alias":
        source, target = draw(_pair())
        return {"tools": tools, "type": kind, **place, "from": source, "to": target}
    value = draw(st.one_of(json_values, st.just("step-{{index}}")))
    return {"tools": tools, "type": kind, **place, "from": draw(st.sampled_from(NAMES)), "value": value}


@st.composite
def rule_sets(draw: Any) -> list[dict[str, Any]]:
    kinds = draw(
        st.lists(
            st.sampled_from(
                ["param_alias", "param_default", "type_coerce", "json_accept_both", "nested_alias", "nested_default"]
            ),
            max_size=6,
        )
    )
    return [{"id": f"r{index}", **_rule(kind, draw)} for index, kind in enumerate(kinds)]


scalars_hosts_send = st.one_of(json_values, boolean_strings, number_strings)
items = st.dictionaries(st.sampled_from(NAMES), scalars_hosts_send, max_size=4) | scalars_hosts_send


@st.composite
def payloads(draw: Any) -> Any:
    array = draw(st.lists(items, max_size=4))
    path = draw(st.sampled_from(PATHS))
    payload: Any = array
    for part in reversed(path[:-2].split(".") if path != "[]" else []):
        payload = {part: payload}
    return json.dumps(payload) if draw(st.booleans()) else payload


calls = st.fixed_dictionaries({}, optional={PAYLOAD: payloads()}).flatmap(
    lambda base: st.dictionaries(st.sampled_from(NAMES), scalars_hosts_send, max_size=4).map(
        lambda top: {**top, **base}
    )
)


def _leaves(value: Any) -> Counter[str]:
    """Every scalar (and empty container, but for objects in arrays) in ``value``, reading strings
    that hold JSON arrays or objects as what they hold; each as its JSON text, so that ``1`` and
    ``true`` differ."""
    found: Counter[str] = Counter()
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str) and item[:1] in ("[", "{"):
            try:
                parsed = json.loads(item)
            except ValueError:
                parsed = None
            if isinstance(parsed, (list, dict)):
                item = parsed
        if isinstance(item, dict) and item:
            pending.extend(item.values())
        elif isinstance(item, list) and item:
            # An empty object in an array is not counted: a nested default may fill it.
            pending.extend(child for child in item if child != {})
        else:
            found[json.dumps(item)] += 1
    return found


def _values(arguments: dict[str, Any]) -> Counter[str]:
    return sum((_leaves(value) for value in arguments.values()), Counter())


def _recorded(applied: list[dict[str, Any]]) -> Counter[str]:
    recorded: Counter[str] = Counter()
    for entry in applied:
        if "dropped" in entry:
            recorded += _leaves(entry["dropped"])
        if entry["type"] == "type_coerce":
            recorded += _leaves(entry["from"])
    return recorded


@given(rules=rule_sets(), call=calls)
def test_every_value_sent_is_in_the_output_or_in_a_record(rules: list[dict[str, Any]], call: dict[str, Any]) -> None:
    before = copy.deepcopy(call)
    result = Normalizer(rules, on_conflict="keep_target").apply("t", call)
    assert call == before  # never mutated
    missing = _values(before) - _values(result.arguments) - _recorded(result.applied)
    assert not missing, (missing, result)
    for entry in result.applied:
        assert {"rule_id", "type", "param", "from", "to"} <= set(entry)
        if "dropped" in entry:
            assert entry["note"]  # says why


@given(rules=rule_sets(), call=calls)
def test_under_the_error_policy_a_call_loses_nothing_or_is_refused(
    rules: list[dict[str, Any]], call: dict[str, Any]
) -> None:
    from pydantic_lenient.normalizer.engine import NormalizationConflict

    try:
        result = Normalizer(rules).apply("t", call)
    except NormalizationConflict:
        return
    assert all(
        "dropped" not in entry or entry["note"] == "same value sent under both names; kept one"
        for entry in result.applied
    )
