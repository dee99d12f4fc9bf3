"""Hypothesis strategies: arbitrary JSON values, and the near-misses hosts and models produce."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

JS_SAFE_INTEGER = 2**53 - 1

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=8,
)

# Characters that make a string almost, but not quite, a number or a boolean.
_TRICKY = "0123456789-+._ eE\t\n\u00a0xX\u0663\uff11\u0661trueTRUEfalsFALSnNiIyYo"
tricky_strings = st.text(alphabet=_TRICKY, max_size=12)


def _case_variants(word: str) -> st.SearchStrategy[str]:
    return st.tuples(*[st.sampled_from((char.lower(), char.upper())) for char in word]).map("".join)


number_strings = st.one_of(
    st.integers().map(str),
    st.integers(min_value=0).map(lambda number: "0" + str(number)),  # leading zeros
    st.integers().map(lambda number: f"{number}.0"),
    st.floats(allow_nan=False).map(repr),  # includes 'inf', '1e+16'
    st.from_regex(r"\A-?(0|[1-9][0-9]{0,5})(\.[0-9]{1,4})?([eE][+-]?[0-9]{1,3})?\Z"),  # JSON numbers
    st.from_regex(r"\A[0-9]{1,25}\Z"),
)
boolean_strings = st.one_of(
    _case_variants("true"),
    _case_variants("false"),
    st.sampled_from(["yes", "no", "on", "off", "1", "0", "t", "f", "", " true", "false ", "truE\n"]),
)

near_misses: st.SearchStrategy[Any] = st.one_of(
    tricky_strings,
    number_strings,
    boolean_strings,
    st.floats(allow_nan=False, allow_infinity=False, min_value=-(2.0**70), max_value=2.0**70),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([True, False, None, 0.0, -0.0, 1.0, 1.5, [], {}, ["1"], {"value": 1}]),
)

any_input = st.one_of(json_values, near_misses)
