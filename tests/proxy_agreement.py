"""Host and proxy agreement, as the proxy's docs list it ("Host and proxy agree" in docs/proxy.md):
what a host's validator says of the widened schema, what repair says of the server's own, and the
listed repairs a widened schema does not advertise (exception 4)."""

from __future__ import annotations

import re
from typing import Any

from pydantic_lenient.repair.engine import Repairer, RepairResult
from pydantic_lenient.testing import host_validator
from pydantic_lenient.types.forms import JSON_NUMBER, SIGNED_DIGITS


def host_accepts(widened: Any, value: Any, draft: Any = None) -> bool:
    return bool(host_validator(widened, draft=draft, check=False).is_valid(value))


def proxy_result(schema: Any, value: Any, draft: Any = None) -> RepairResult:
    return Repairer(schema, draft=draft).repair(value)


def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.removesuffix("$") + r"\Z")


SPELLED = {"integer": _pattern(SIGNED_DIGITS), "number": _pattern(JSON_NUMBER)}


def explained_by_repair(result: RepairResult) -> bool:
    """A repair the widened schema does not advertise: a number or boolean made a string, a key
    renamed to the declared name, or a number read from a string the advertised pattern does not
    spell (``" 5"``, ``"5.0"``, ``"1e2"`` where an integer goes, ``"007"`` where a number goes)."""
    for repair in result.repairs:
        if repair["kind"] in ("scalar_to_string", "renamed_key"):
            return True
        if repair["kind"] == "string_to_number":
            spelled = SPELLED["integer" if isinstance(repair["to"], int) else "number"]
            if not spelled.match(repair["from"]):
                return True
            if not SPELLED["number"].match(repair["from"]):
                return True  # "007" where a number goes: the number pattern has no leading zeros
    return False
