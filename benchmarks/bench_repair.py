"""Cost of repairing a call against python-jsonschema's compiled validator just validating it, as ratios from one run.

python benchmarks/bench_repair.py
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

import jsonschema

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import best_times, print_ratios

from pydantic_lenient.repair.engine import Repairer

ADDRESS = {
    "type": "object",
    "properties": {"street": {"type": "string"}, "zip": {"type": "string"}, "floor": {"type": "integer"}},
}
ATTACHMENT = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "bytes": {"type": "integer"}, "inline": {"type": "boolean"}},
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {"Address": ADDRESS, "Attachment": ATTACHMENT},
    "properties": {
        "to": {"type": "string"},
        "cc": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "subject": {"type": "string"},
        "body": {"type": "string"},
        "priority": {"type": "integer", "minimum": 1, "maximum": 5},
        "draft": {"type": "boolean"},
        "send_at": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "retries": {"type": "integer"},
        "timeout": {"type": "number"},
        "track_opens": {"type": "boolean"},
        "labels": {"type": "array", "items": {"type": "string"}},
        "sender": {"$ref": "#/$defs/Address"},
        "recipient": {"$ref": "#/$defs/Address"},
        "attachments": {"type": "array", "items": {"$ref": "#/$defs/Attachment"}},
        "thread": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "signature": {"type": "string"},
        "encrypt": {"type": "boolean"},
        "reply_to": {"type": "string"},
        "language": {"type": "string"},
        "max_size": {"type": "integer"},
    },
    "required": ["to", "subject", "body"],
}
VALID_CALL: dict[str, Any] = {
    "to": "a@example.com",
    "cc": ["b@example.com"],
    "subject": "Hello",
    "body": "Text",
    "priority": 3,
    "draft": False,
    "send_at": None,
    "retries": 2,
    "timeout": 2.5,
    "track_opens": True,
    "labels": ["work", "urgent"],
    "sender": {"street": "Main 1", "zip": "12345", "floor": 2},
    "recipient": {"street": "Side 2", "zip": "54321", "floor": 0},
    "attachments": [{"name": "a.txt", "bytes": 10, "inline": False}, {"name": "b.png", "bytes": 20, "inline": True}],
    "thread": 7,
    "signature": "--",
    "encrypt": False,
    "reply_to": "c@example.com",
    "language": "en",
    "max_size": 1000,
}
# Three fixes: a numeric string, a string boolean nested behind a $ref, and a stringified array.
MANGLED_CALL = {
    **VALID_CALL,
    "priority": "3",
    "attachments": [VALID_CALL["attachments"][0], {**VALID_CALL["attachments"][1], "inline": "true"}],
    "labels": '["work", "urgent"]',
}


def main() -> int:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    repairer = Repairer(SCHEMA)
    result = repairer.repair(MANGLED_CALL)
    assert len(result.repairs) == 3, result.repairs
    assert result.valid
    assert result.arguments == VALID_CALL
    times = best_times(
        {
            "repair": functools.partial(repairer.repair, MANGLED_CALL),
            # What jsonschema's validate() does: every error, to pick the best one to report.
            "validate": lambda: list(validator.iter_errors(MANGLED_CALL)),
            # is_valid() stops at the first error, here the fifth field.
            "first error": functools.partial(validator.is_valid, MANGLED_CALL),
            "repair, valid call": functools.partial(repairer.repair, VALID_CALL),
            "validate, valid call": functools.partial(validator.is_valid, VALID_CALL),
        },
        number=1_000,
        rounds=9,
    )
    met = print_ratios(
        "20-field schema with nested objects and $refs, a call needing 3 fixes",
        [("Repairer.repair, vs a compiled validator's validate() of the call", "repair", "validate", 0.35)],
        times,
    )
    print_ratios(
        "for comparison",
        [
            ("Repairer.repair, vs is_valid() stopping at the first error", "repair", "first error", 3.0),
            ("Repairer.repair of a valid call, vs validating it", "repair, valid call", "validate, valid call", 3.0),
        ],
        times,
    )
    print(f"\n{sum(met)} of {len(met)} targets met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
