"""The string forms the lenient types accept, as patterns, and the schema helpers that read them.

Plain data and functions, no pydantic: the proxy's widening (`pydantic_lenient.schema.widen`) and
the outcome shapes read them, and a remote proxy session loads them before its first ``tools/list``
answer without waiting for pydantic. Every module reads them from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .boolean_text import TRUE_OR_FALSE
from .digit_ranges import DigitForm, exact_digit_pattern

__all__ = (
    "ADVERTISED_DIGIT_PATTERNS",
    "ANNOTATION_KEYWORDS",
    "JSON_NUMBER",
    "JSON_NUMBER_TEXT",
    "MAX_DIGIT_STRING_LENGTH",
    "NONNEGATIVE_OF_SIGNED",
    "NULL_TEXT",
    "POSITIVE_DIGITS",
    "SCALAR_STRING_FORMS",
    "SIGNED_DIGITS",
    "UNSIGNED_DIGITS",
    "advertised_digit_patterns",
    "narrowed_digit_pattern",
    "pattern_with_null",
    "pattern_without_null",
    "split_annotations",
)

MAX_DIGIT_STRING_LENGTH = 4300
"""Longest digit string an integer type converts: Python's default int/str conversion limit."""

JSON_NUMBER_TEXT = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
"""The grammar of a JSON number (RFC 8259), unanchored; every string-to-number rule uses it."""

JSON_NUMBER = f"^{JSON_NUMBER_TEXT}$"
"""A JSON number, as RFC 8259 spells it: no '+', no leading zeros, no bare '.', no NaN or Infinity."""

# The leading-zeros policy: a digit string may start with zeros (``"007"`` is 7), bounded or not,
# as repair reads it too; a bound then refuses the value, never the spelling (``"0000"`` is 0).
SIGNED_DIGITS = "^-?[0-9]+$"
UNSIGNED_DIGITS = "^[0-9]+$"
POSITIVE_DIGITS = "^0*[1-9][0-9]*$"
"""The digit strings of a value of at least 1 (`LenientPositiveInt` advertises it)."""

# Advertised when a bound is added outside a signed marker (`Field(ge=0)`). The validator still
# checks the marker's own pattern, so it leaves out only strings whose value is out of range: the
# host then rejects exactly what the validator would reject with a range error.
NONNEGATIVE_OF_SIGNED = "^(?:[0-9]+|-0+)$"

ADVERTISED_DIGIT_PATTERNS = (
    SIGNED_DIGITS,
    UNSIGNED_DIGITS,
    POSITIVE_DIGITS,
    NONNEGATIVE_OF_SIGNED,
)
"""Every string pattern an integer type may advertise (the style stage recognises them)."""

SCALAR_STRING_FORMS: Mapping[str, str] = {
    **dict.fromkeys(ADVERTISED_DIGIT_PATTERNS, "integer"),
    JSON_NUMBER: "number",  # LenientFloat's and LenientDecimal's
    TRUE_OR_FALSE: "boolean",
}
"""Every string form a lenient scalar advertises as its base pattern, with the canonical JSON type it
stands for (the style stage recognises a lenient scalar by it). A scalar with a new string form adds
its pattern here (an integer's pattern narrowed to its bounds is recognised from the bounds)."""


def members_digit_pattern(members: Iterable[int]) -> str:
    """The digit strings that read as one of ``members`` (an integer ``Literal``'s or ``IntEnum``'s,
    as `DigitText` advertises them): each as a signed digit string reads it, leading zeros and ``-0``
    for 0 included. The style stage recognises the pattern beside its ``enum`` by it.

    >>> members_digit_pattern([0, 1, -2])
    '^(?:-?0+|0*1|-0*2)$'
    """
    return f"^(?:{'|'.join(map(_member_digits, members))})$"


def _member_digits(value: int) -> str:
    if value == 0:
        return "-?0+"
    return f"0*{value}" if value > 0 else f"-0*{-value}"


_FORMS = {
    SIGNED_DIGITS: DigitForm(signed=True),
    UNSIGNED_DIGITS: DigitForm(signed=False),
    POSITIVE_DIGITS: DigitForm(signed=False),
}


def advertised_digit_patterns(lower: int | None, upper: int | None) -> frozenset[str]:
    """Every string pattern an integer type may advertise beside ``{"type": "integer"}`` with these
    inclusive bounds (``minimum``/``maximum``): the style stage recognises its string forms by them."""
    exact = (exact_digit_pattern(lower, upper, form) for form in _FORMS.values())
    return frozenset({*ADVERTISED_DIGIT_PATTERNS, *(pattern for pattern in exact if pattern is not None)})


# The least value each base pattern can spell (a signed one has none).
_NATURAL_LOWER: dict[str, int | None] = {SIGNED_DIGITS: None, UNSIGNED_DIGITS: 0, POSITIVE_DIGITS: 1}


def narrowed_digit_pattern(pattern: str, lower: int | None, upper: int | None) -> str:
    """``pattern`` (one of the three base patterns) narrowed to the strings whose value is in
    ``lower..upper``, when that stays short; any other pattern unchanged."""
    form = _FORMS.get(pattern)
    if form is None:
        return pattern
    natural = _NATURAL_LOWER[pattern]
    if natural is not None and (lower is None or lower < natural):
        lower = natural  # the pattern spells no smaller value
    if upper is None and lower == natural:
        return pattern  # nothing to narrow
    exact = exact_digit_pattern(lower, upper, form)
    return pattern if exact is None else exact


NULL_TEXT = "null"
"""The one string read as JSON null, under the one ``"null"`` policy (docs/types.md): at a nullable
location none of whose other forms takes this very string as it is (numbers, booleans, arrays,
objects, a ``Literal`` or ``Enum`` without it), ``"null"`` is None; where the string could be meant as
itself (``Optional[str]``), it stays text."""


_WITH_NULL_PREFIX = "^(?:"
_WITH_NULL_SUFFIX = f"|{NULL_TEXT})$"


def pattern_with_null(pattern: str) -> str:
    """An ECMA-262 ``pattern`` that also matches exactly ``null`` (what `NullText` advertises).

    >>> from pydantic_lenient.types.forms import pattern_with_null
    >>> pattern_with_null("^[0-9]+$")
    '^(?:[0-9]+|null)$'
    """
    core = pattern[1:] if pattern.startswith("^") else f".*(?:{pattern})"
    core = core[:-1] if core.endswith("$") else f"{core}.*"
    return f"{_WITH_NULL_PREFIX}{core}{_WITH_NULL_SUFFIX}"


def pattern_without_null(pattern: str) -> str | None:
    """The anchored pattern `pattern_with_null` widened into ``pattern``; None if ``pattern`` is not
    one it wrote.

    >>> from pydantic_lenient.types.forms import pattern_without_null
    >>> pattern_without_null("^(?:[0-9]+|null)$"), pattern_without_null("^[0-9]+$")
    ('^[0-9]+$', None)
    """
    if not (pattern.startswith(_WITH_NULL_PREFIX) and pattern.endswith(_WITH_NULL_SUFFIX)):
        return None
    return f"^{pattern[len(_WITH_NULL_PREFIX) : -len(_WITH_NULL_SUFFIX)]}$"


# Keywords that describe a value without constraining it; a marker hoists them out of its branches.
ANNOTATION_KEYWORDS = frozenset(
    {"title", "description", "examples", "default", "deprecated", "readOnly", "writeOnly", "$comment"}
)


def split_annotations(schema: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(schema without annotation keywords, those keywords)``."""
    kept = {key: value for key, value in schema.items() if key not in ANNOTATION_KEYWORDS}
    return kept, {key: value for key, value in schema.items() if key in ANNOTATION_KEYWORDS}
