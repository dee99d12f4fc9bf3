"""ECMA-262 patterns, read exactly as JS hosts read them, on engines that cannot run away.

JSON Schema patterns are ECMA-262 regular expressions, and JS hosts (Ajv) compile them with the
``u`` flag. `regress` parses them exactly that way, so it decides which patterns are valid; but it
matches by backtracking, and ``^(a+)+$`` against 30 characters takes minutes. jsonschema-rs matches
with fancy-regex, which hands everything but lookaround to Rust's linear-time ``regex`` crate and
stops lookaround after a backtracking limit. It already reads ``\\d``, ``\\w`` and ``\\s`` as ECMA
does; where it would read a pattern differently, `translate` rewrites the pattern into one it
reads as ECMA-262 does:

| ECMA-262 (``u`` flag) | jsonschema-rs would read | rewritten as |
|---|---|---|
| ``.`` | also ``\\r``, U+2028, U+2029 | ``[^\\n\\r\\u2028\\u2029]`` |
| ``\\b``, ``\\B`` | Unicode word characters | lookaround on ``[A-Za-z0-9_]`` |
| ``[^]``, ``[]`` | a syntax error | ``[\\s\\S]``, ``[^\\s\\S]`` |
| ``[\\b]``, ``\\0`` | a syntax error | ``\\x08``, ``\\x00`` |
| ``\\uD83D\\uDE00`` (a surrogate pair) | a syntax error | ``\\u{1F600}`` |

What cannot be rewritten exactly is *undecidable* and the string it checks is not accepted (with a
reason), never guessed: backreferences (ECMA matches a group that took no part, or comes later, as
the empty string), lookbehind (ECMA's may have any length), modifiers such as ``(?i:...)``, lone
surrogates, and patterns longer than `MAX_PATTERN_LENGTH`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

try:
    import jsonschema_rs
    import regress
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "repair needs jsonschema-rs and regress: pip install 'pydantic-lenient[repair]'"
        " (in a clone: pip install -e '.[repair]')"
    ) from error

__all__ = ("MAX_PATTERN_LENGTH", "PATTERN_OPTIONS", "Translation", "translate")

MAX_PATTERN_LENGTH = 10_000
# Rust's regex crate is linear in the input; the limit bounds what fancy-regex does for lookaround.
PATTERN_OPTIONS = jsonschema_rs.FancyRegexOptions(backtrack_limit=100_000, size_limit=10_000_000)

_WORD = "[A-Za-z0-9_]"
_BOUNDARY = f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))"
_NOT_BOUNDARY = f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))"
_DOT = "[^\\n\\r\\u2028\\u2029]"
_HEX = frozenset("0123456789abcdefABCDEF")


@dataclass(frozen=True, slots=True)
class Translation:
    """A pattern as jsonschema-rs should be given it, or why it cannot be checked.

    ``pattern`` is None when ``problem`` is set; ``invalid`` says the pattern is not ECMA-262 at
    all (a malformed schema), rather than valid but beyond what can be checked within bounds.
    """

    pattern: str | None
    problem: str | None = None
    invalid: bool = False


class _Undecidable(Exception):
    pass


def _code_point_escape(code_point: int) -> str:
    if 0xD800 <= code_point <= 0xDFFF:
        raise _Undecidable("a lone surrogate")
    return f"\\u{{{code_point:X}}}"


def _unicode_escape(pattern: str, index: int) -> tuple[str, int]:
    """``\\uXXXX``, ``\\u{X...}`` or a surrogate pair at ``pattern[index]`` (the backslash)."""
    if pattern[index + 2] == "{":
        end = pattern.index("}", index)
        return _code_point_escape(int(pattern[index + 3 : end], 16)), end + 1
    high = int(pattern[index + 2 : index + 6], 16)
    low_text = pattern[index + 6 : index + 12]
    if 0xD800 <= high <= 0xDBFF and low_text[:2] == "\\u" and set(low_text[2:]) <= _HEX and len(low_text) == 6:
        low = int(low_text[2:], 16)
        if 0xDC00 <= low <= 0xDFFF:
            return _code_point_escape(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)), index + 12
    return _code_point_escape(high), index + 6


def _escape(pattern: str, index: int, in_class: bool) -> tuple[str, int]:
    """The rewrite of the escape at ``pattern[index]`` (a backslash), and the index after it."""
    letter = pattern[index + 1]
    if letter == "b":
        return ("\\x08" if in_class else _BOUNDARY), index + 2
    if letter == "B":
        return _NOT_BOUNDARY, index + 2
    if letter == "0":
        return "\\x00", index + 2
    if letter in "123456789" or letter == "k":
        raise _Undecidable("a backreference")
    if letter == "u":
        return _unicode_escape(pattern, index)
    if letter in "pP":
        end = pattern.index("}", index)
        return pattern[index : end + 1], end + 1
    if letter == "c":
        return pattern[index : index + 3], index + 3
    if letter == "x":
        return pattern[index : index + 4], index + 4
    return pattern[index : index + 2], index + 2


def _rewrite(pattern: str) -> str:
    """``pattern`` (valid ECMA-262 with the ``u`` flag) as jsonschema-rs reads it the same way."""
    parts: list[str] = []
    index, length, in_class = 0, len(pattern), False
    while index < length:
        char = pattern[index]
        if 0xD800 <= ord(char) <= 0xDFFF:
            raise _Undecidable("a lone surrogate")
        if char == "\\":
            text, index = _escape(pattern, index, in_class)
            parts.append(text)
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            if pattern.startswith("[^]", index):
                parts.append("[\\s\\S]")
                index += 3
                continue
            if pattern.startswith("[]", index):
                parts.append("[^\\s\\S]")
                index += 2
                continue
            in_class = True
            if pattern.startswith("[^", index):  # so that a "]" right after is not read as the end
                parts.append("[^")
                index += 2
                continue
        elif char == ".":
            char = _DOT
        elif char == "(" and pattern.startswith("(?", index):
            follower = pattern[index + 2 : index + 4]
            if follower in ("<=", "<!"):
                raise _Undecidable("lookbehind")
            if follower[:1] not in (":", "=", "!", "<"):
                raise _Undecidable("a modifier group")
        parts.append(char)
        index += 1
    return "".join(parts)


@functools.lru_cache(maxsize=4096)
def translate(pattern: str) -> Translation:
    """``pattern`` as jsonschema-rs reads it exactly as ECMA-262 does, or why it cannot be."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return Translation(None, f"a pattern longer than {MAX_PATTERN_LENGTH:,} characters is not checked")
    try:
        regress.Regex(pattern, "u")
    except Exception as error:  # RegressError; anything else from a hostile pattern is the same verdict
        return Translation(None, f"{pattern!r} is not an ECMA-262 regular expression: {error}", invalid=True)
    try:
        rewritten = _rewrite(pattern)
    except _Undecidable as error:
        return Translation(None, f"pattern {pattern!r} uses {error}, which cannot be checked within bounds")
    except (ValueError, IndexError):  # an escape regress took and this reader does not know
        return Translation(None, f"pattern {pattern!r} cannot be checked within bounds")
    if matcher(rewritten) is None:
        return Translation(None, f"pattern {pattern!r} is too large to check within bounds")
    return Translation(rewritten)


@functools.lru_cache(maxsize=4096)
def matcher(rewritten: str) -> jsonschema_rs.Validator | None:
    """A validator of ``{"pattern": rewritten}``: its ``is_valid(text)`` is a bounded search."""
    try:
        return jsonschema_rs.validator_for({"pattern": rewritten}, pattern_options=PATTERN_OPTIONS)
    except Exception:  # too large for the engine's size limits, or a form it refuses
        return None
