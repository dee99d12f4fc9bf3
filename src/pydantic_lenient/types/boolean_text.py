"""The one table of boolean spellings: every string the package reads as a boolean.

`booleans.StrictBoolish` and repair take the words ``true`` and ``false`` in any ASCII letter case;
the normalizer's ``type_coerce`` rule also takes ``1`` and ``0``. Nothing else, and no truthiness:
``"false"``, ``"0"`` and ``""`` never become True.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ("BOOLEAN_DIGITS", "BOOLEAN_WORDS", "TRUE_OR_FALSE")


def _ascii_case_variants(word: str) -> list[str]:
    return ["".join(letters) for letters in itertools.product(*((letter, letter.upper()) for letter in word))]


BOOLEAN_WORDS: Mapping[str, bool] = MappingProxyType(
    {
        **dict.fromkeys(_ascii_case_variants("true"), True),
        **dict.fromkeys(_ascii_case_variants("false"), False),
    }
)
"""``"true"`` and ``"false"`` in any ASCII letter case (``"İ"`` or the Kelvin sign never count)."""

BOOLEAN_DIGITS: Mapping[str, bool] = MappingProxyType({**BOOLEAN_WORDS, "1": True, "0": False})
"""The words, plus ``"1"`` and ``"0"``: what a normalizer ``type_coerce`` rule to ``bool`` reads."""

TRUE_OR_FALSE = "^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$"
"""`BOOLEAN_WORDS` as a JSON Schema pattern (JSON Schema patterns have no case-insensitive flag)."""
