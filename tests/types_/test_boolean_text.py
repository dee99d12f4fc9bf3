"""The one table of boolean spellings, and every reader of it agreeing on every string."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from pydantic_lenient import Normalizer, StrictBoolish
from pydantic_lenient.types.boolean_text import BOOLEAN_DIGITS, BOOLEAN_WORDS, TRUE_OR_FALSE
from tests.sdks import require
from tests.strategies import boolean_strings

STRICT_BOOLISH: TypeAdapter[bool] = TypeAdapter(StrictBoolish)
COERCE = Normalizer([{"id": "b", "tools": ["t"], "type": "type_coerce", "from": "f", "coerce_to": "bool"}])


def test_the_table() -> None:
    assert {text for text in BOOLEAN_WORDS if re.fullmatch(TRUE_OR_FALSE, text)} == set(BOOLEAN_WORDS)
    assert len(BOOLEAN_WORDS) == 2**4 + 2**5
    assert all(BOOLEAN_WORDS[text] == (text.lower() == "true") for text in BOOLEAN_WORDS)
    assert dict(BOOLEAN_DIGITS) == {**BOOLEAN_WORDS, "1": True, "0": False}


@given(text=boolean_strings | st.text(alphabet="truefalsTRUEFALS01 \u0130K\u0131\u212a", max_size=6) | st.text())
def test_every_reader_takes_exactly_the_tables_spellings(text: str) -> None:
    repair = require("pydantic_lenient.repair.engine")
    expected = BOOLEAN_WORDS.get(text)
    try:
        validated: bool | None = STRICT_BOOLISH.validate_python(text)
    except ValidationError:
        validated = None
    assert validated == expected
    assert COERCE.apply("t", {"f": text}).arguments["f"] == BOOLEAN_DIGITS.get(text, text)
    repaired = repair.repair_arguments({"type": "object", "properties": {"f": {"type": "boolean"}}}, {"f": text})
    assert repaired.arguments["f"] == (text if expected is None else expected)
