"""Exact patterns for a bounded integer's digit strings: ``^(?:[1-9][0-9]{0,4}|100000)$`` for 1..100000.

A lenient integer validates its string form with one of two base patterns (signed, unsigned:
`pydantic_lenient.types.integers`) and then checks its bounds. Leading zeros are taken everywhere
(``"007"`` is 7, as repair reads it too), so every range pattern admits them: ``"0000"`` is 0. The pattern it advertises
is the base pattern restricted to the strings whose value is in bounds, so a host's verdict on a
string is the server's. A range whose pattern would pass `MAX_PATTERN_LENGTH` characters keeps the
base pattern, and a host then admits an out-of-range string that the server refuses with a range
error (README, exception 1).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ("MAX_PATTERN_LENGTH", "DigitForm", "exact_digit_pattern")

MAX_PATTERN_LENGTH = 200
"""The longest range pattern advertised; a longer one would cost hosts more than it helps."""


class DigitForm(NamedTuple):
    """Which digit strings a base pattern takes, besides canonical numerals such as ``"42"`` and
    the same with leading zeros (``"007"``), which every form takes."""

    signed: bool
    """A leading ``-`` (``"-7"``, and ``"-0"`` for zero)."""


def exact_digit_pattern(lower: int | None, upper: int | None, form: DigitForm) -> str | None:
    """The strings ``form`` takes whose value is in ``lower..upper`` (inclusive), as one anchored
    pattern; None when the range is unbounded on both sides or its pattern is too long.

    >>> from pydantic_lenient.types.digit_ranges import DigitForm, exact_digit_pattern
    >>> exact_digit_pattern(1, 100000, DigitForm(signed=False))
    '^0*(?:[1-9][0-9]{0,4}|100000)$'
    >>> exact_digit_pattern(0, 255, DigitForm(signed=False))
    '^0*(?:0|[1-9][0-9]?|1[0-9]{2}|2(?:[0-4][0-9]|5[0-5]))$'
    >>> exact_digit_pattern(-5, None, DigitForm(signed=True))
    '^(?:0*(?:0|[1-9][0-9]*)|-0*[1-5]|-0+)$'
    """
    if lower is None and upper is None:
        return None
    if lower is not None and upper is not None and lower > upper:
        return _NOTHING  # an empty range (``ge=0, lt=0``): no string is in it
    alternatives: list[str] = []
    zeros = "0*"
    if upper is None or upper >= 0:
        numerals = _numerals(max(lower, 0) if lower is not None else 0, upper)
        alternatives.append(zeros + _group(numerals))
    if form.signed and (lower is None or lower < 0):
        magnitudes = _numerals(1 if upper is None or upper >= 0 else -upper, None if lower is None else -lower)
        alternatives.append("-" + zeros + _group(magnitudes))
    if form.signed and (lower is None or lower <= 0) and (upper is None or upper >= 0):
        alternatives.append("-0+")  # minus zero, which the signed base pattern takes
    pattern = f"^{_group(alternatives)}$"
    return pattern if len(pattern) <= MAX_PATTERN_LENGTH else None


_NOTHING = "^(?!)$"
"""A pattern no string matches (an empty negative lookahead), in ECMA-262 and Python alike."""


def _group(alternatives: list[str]) -> str:
    return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"


def _numerals(low: int, high: int | None) -> list[str]:
    """Alternatives matching the canonical numerals (no leading zero) of ``low..high``, ``low >= 0``."""
    alternatives: list[str] = []
    if low == 0:
        alternatives.append("0")
        low = 1
    if high is not None and low > high:
        return alternatives
    full_from: int | None = None  # the first length of a run of lengths taken whole
    length = len(str(low))
    while True:
        smallest, largest = 10 ** (length - 1), 10**length - 1
        whole = low == smallest and (high is None or high >= largest)
        if whole:
            if full_from is None:
                full_from = length
        else:
            if full_from is not None:
                alternatives.append(_run(full_from, length - 1))
                full_from = None
            alternatives.extend(_same_length(str(low), str(largest if high is None else min(high, largest))))
        if high is None:
            alternatives.append(_run(length + 1 if full_from is None else full_from, None))
            return alternatives
        if high <= largest:
            if full_from is not None:
                alternatives.append(_run(full_from, length))
            return alternatives
        low, length = largest + 1, length + 1


def _run(first: int, last: int | None) -> str:
    """Every numeral of ``first`` to ``last`` digits (no upper limit for None)."""
    if last is None:
        rest = "*" if first == 1 else f"{{{first - 1},}}"
        return f"[1-9][0-9]{rest}"
    if first == last:
        return "[1-9]" + _digits(first - 1)
    return f"[1-9][0-9]{{{first - 1},{last - 1}}}" if first > 1 or last > 2 else "[1-9][0-9]?"


def _digits(count: int) -> str:
    return "" if count == 0 else "[0-9]" if count == 1 else f"[0-9]{{{count}}}"


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"[{first}-{last}]"


def _same_length(low: str, high: str) -> list[str]:
    """Alternatives matching every digit string from ``low`` to ``high``, both of one length."""
    if low == high:
        return [low]
    rest = len(low) - 1
    if low[0] == high[0]:
        return [low[0] + _group(_same_length(low[1:], high[1:]))]
    takes_all_from_low = low[1:] == "0" * rest
    takes_all_to_high = high[1:] == "9" * rest
    alternatives: list[str] = []
    if not takes_all_from_low:
        alternatives.append(low[0] + _group(_same_length(low[1:], "9" * rest)))
    first = int(low[0]) + (0 if takes_all_from_low else 1)
    last = int(high[0]) - (0 if takes_all_to_high else 1)
    if first <= last:
        alternatives.append(_span(first, last) + _digits(rest))
    if not takes_all_to_high:
        alternatives.append(high[0] + _group(_same_length("0" * rest, high[1:])))
    return alternatives
