"""A declarative request normalizer: rules for wrong names, missing fields and wrong shapes.

Hosts send ``old_str`` where a tool says ``old_text``, leave out ids that nested steps need, send
``"true"`` for a boolean or a raw array where a parameter takes JSON text. Rules are data (JSON or
Python), apply in order, never mutate their input, never lose a value, and record every change.

    normalizer = Normalizer.from_file("rules.json")
    result = normalizer.apply("edit_file", {"old_str": "a", "new_str": "b"})
    result.arguments  # {"old_text": "a", "new_text": "b"}
    result.applied    # [{"rule_id": "edit-old_str", "type": "param_alias", ...}, ...]
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import logging
import math
import os
import re
import tempfile
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar, get_args

from pydantic import BaseModel, model_validator

from ._scalar import JSON_NUMBER_TEXT, MAX_DIGIT_STRING_LENGTH
from .integers import SIGNED_DIGITS

__all__ = (
    "BUILTIN_RULES",
    "RULE_TYPES",
    "NormalizationConflict",
    "NormalizeResult",
    "Normalizer",
    "Rule",
    "RuleError",
    "rules_from_model",
)

logger = logging.getLogger("pydantic_lenient.normalizer")

RuleType = Literal["param_alias", "param_default", "type_coerce", "json_accept_both", "nested_alias", "nested_default"]
RULE_TYPES: tuple[RuleType, ...] = get_args(RuleType)

# The JSON keys a rule has; "id", "tools" and "type" are required for every type.
_JSON_KEYS = ("id", "tools", "type", "from", "to", "coerce_to", "in_payload", "array_path", "value")
_REQUIRED: dict[str, frozenset[str]] = {
    "param_alias": frozenset({"from", "to"}),
    "param_default": frozenset({"from", "value"}),
    "type_coerce": frozenset({"from", "coerce_to"}),
    "json_accept_both": frozenset({"from"}),
    "nested_alias": frozenset({"in_payload", "array_path", "from", "to"}),
    "nested_default": frozenset({"in_payload", "array_path", "from", "value"}),
}
_OPTIONAL: dict[str, frozenset[str]] = {"json_accept_both": frozenset({"coerce_to"})}
_COERCE_TARGETS: dict[str, frozenset[str]] = {
    "type_coerce": frozenset({"bool", "int", "float"}),
    "json_accept_both": frozenset({"string", "json"}),
}
_ARRAY_PATH = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*)?\[\]")
_INTEGER_TEXT = re.compile(SIGNED_DIGITS)
_NUMBER_TEXT = re.compile(JSON_NUMBER_TEXT)
_NO_VALUE: Any = type("NoValue", (), {"__repr__": lambda self: "<no value>"})()

BUILTIN_RULES: tuple[Rule, ...] = ()
"""Rules applied before any others. The library ships none: every rule is about someone's tools."""


class RuleError(ValueError):
    """A rule that cannot be loaded; the message names the rule."""


class NormalizationConflict(ValueError):
    """An alias's source and target were both sent, with different values."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One normalization rule. JSON shape: ``id, tools, type, from, to, coerce_to, in_payload,
    array_path, value`` (``from_`` here, as ``from`` is a Python keyword).

    ``tools`` lists tool names, or ``"*"`` for every tool. What ``from`` names depends on the type:
    the parameter (or payload field) read, renamed, coerced or defaulted.
    """

    id: str
    tools: tuple[str, ...]
    type: RuleType
    from_: str | None = None
    to: str | None = None
    coerce_to: str | None = None
    in_payload: str | None = None
    array_path: str | None = None
    value: Any = _NO_VALUE

    def __post_init__(self) -> None:
        name = f"rule {self.id!r}" if isinstance(self.id, str) and self.id else "a rule"
        if not isinstance(self.id, str) or not self.id:
            raise RuleError(f"{name}: id must be a non-empty string")
        if self.type not in RULE_TYPES:
            raise RuleError(f"{name}: unknown type {self.type!r}; expected one of {', '.join(RULE_TYPES)}")
        if (
            not isinstance(self.tools, tuple)
            or not self.tools
            or not all(isinstance(tool, str) and tool for tool in self.tools)
        ):
            raise RuleError(f"{name}: tools must be a non-empty list of tool names, or ['*']")
        given = {key for key in _JSON_KEYS[3:] if self._get(key) not in (None, _NO_VALUE)}
        required, optional = _REQUIRED[self.type], _OPTIONAL.get(self.type, frozenset())
        if missing := sorted(required - given):
            raise RuleError(f"{name}: a {self.type} rule needs {', '.join(missing)}")
        if extra := sorted(given - required - optional):
            raise RuleError(f"{name}: a {self.type} rule does not take {', '.join(extra)}")
        for key in ("from", "to", "in_payload"):
            if key in given and not (isinstance(self._get(key), str) and self._get(key)):
                raise RuleError(f"{name}: {key} must be a non-empty string")
        targets = _COERCE_TARGETS.get(self.type)
        if targets is not None and self.coerce_to is not None and self.coerce_to not in targets:
            raise RuleError(f"{name}: coerce_to must be one of {', '.join(sorted(targets))}, not {self.coerce_to!r}")
        if self.array_path is not None and not (
            isinstance(self.array_path, str) and _ARRAY_PATH.fullmatch(self.array_path)
        ):
            raise RuleError(f"{name}: bad array_path {self.array_path!r}; write [] or field.sub[]")

    def _get(self, key: str) -> Any:
        return getattr(self, "from_" if key == "from" else key)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rule:
        """A rule from its JSON shape; unknown keys are refused, naming the rule."""
        if not isinstance(data, Mapping):
            raise RuleError(f"a rule must be a JSON object, not {type(data).__name__}")
        name = f"rule {data.get('id')!r}" if data.get("id") else "a rule"
        if unknown := sorted(set(data) - set(_JSON_KEYS)):
            raise RuleError(f"{name}: unknown field(s) {', '.join(unknown)}")
        tools = data.get("tools")
        return cls(
            id=data.get("id"),  # type: ignore[arg-type]
            tools=tuple(tools) if isinstance(tools, list) else tools,  # type: ignore[arg-type]
            type=data.get("type"),  # type: ignore[arg-type]
            from_=data.get("from"),
            to=data.get("to"),
            coerce_to=data.get("coerce_to"),
            in_payload=data.get("in_payload"),
            array_path=data.get("array_path"),
            value=data.get("value", _NO_VALUE),
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "tools": list(self.tools), "type": self.type}
        for key in _JSON_KEYS[3:]:
            if self._get(key) not in (None, _NO_VALUE):
                data[key] = self._get(key)
        return data

    def applies_to(self, tool: str) -> bool:
        return "*" in self.tools or tool in self.tools


ConflictPolicy = Literal["error", "keep_target"]

# What a call keeps for each rule that changed something: (rule_id, type, param, from, to), plus a
# note when there is one. Most records are constant tuples; they become the documented dicts only
# when read, so a call that nobody inspects allocates no dict per rule.
Record = tuple[Any, ...]
_ENTRY_KEYS = ("rule_id", "type", "param", "from", "to", "note")
_DEFAULT_TYPES = frozenset({"param_default", "nested_default"})


def _entry(record: Record) -> dict[str, Any]:
    entry = dict(zip(_ENTRY_KEYS, record, strict=False))  # a note is optional
    if record[1] in _DEFAULT_TYPES:
        entry["to"] = copy.deepcopy(entry["to"])  # the rule's own value: never hand it out
    return entry


class NormalizeResult:
    """What `Normalizer.apply` returns.

    ``arguments``: a new dict, normalized. ``applied``: one ``{rule_id, type, param, from, to}`` dict
    (with a ``note`` where there is one) per rule that changed something, in order, built when first read.
    """

    __slots__ = ("_applied", "_records", "arguments")

    arguments: dict[str, Any]
    _records: list[Record]
    _applied: list[dict[str, Any]] | None

    def __init__(self, arguments: dict[str, Any], applied: Iterable[dict[str, Any]]) -> None:
        self.arguments, self._records, self._applied = arguments, [], list(applied)

    @property
    def applied(self) -> list[dict[str, Any]]:
        if self._applied is None:
            self._applied = [_entry(record) for record in self._records]
        return self._applied

    def __repr__(self) -> str:
        return f"NormalizeResult(arguments={self.arguments!r}, applied={self.applied!r})"


def _same_value(left: Any, right: Any) -> bool:
    """Equality of JSON values: unlike Python's ``==``, ``true`` is not ``1``."""
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same_value(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_same_value, left, right))
    return bool(left == right)


# The rare paths of the generated plan (see `_plan`): each edits the arguments, a private copy, in
# place and returns its record, or None when it changed nothing.
Step = Callable[[dict[str, Any]], "Record | None"]


def _alias_both_sent(rule: Rule, policy: ConflictPolicy) -> Step:
    """A rename whose source and target were both sent."""
    rule_id, source, target = rule.id, str(rule.from_), str(rule.to)

    def resolve(arguments: dict[str, Any]) -> Record:
        if _same_value(arguments[target], arguments[source]):
            del arguments[source]
            return (rule_id, "param_alias", source, source, target, "same value sent under both names; kept one")
        if policy == "keep_target":
            dropped = arguments.pop(source)
            note = f"conflict: kept {target}, dropped {source}={dropped!r}"
            return (rule_id, "param_alias", source, source, target, note)
        raise NormalizationConflict(
            f"rule {rule_id!r}: got both {source!r} ({arguments[source]!r}) and {target!r} "
            f"({arguments[target]!r}); refusing to drop either"
        )

    return resolve


def _variants(word: str) -> set[str]:
    return {"".join(letters) for letters in itertools.product(*({letter, letter.upper()} for letter in word))}


# Explicit spellings only, in any ASCII case: no truthiness, so "false", "0" and "" never become True.
_BOOLEAN_TEXT = {
    **dict.fromkeys(_variants("true"), True),
    **dict.fromkeys(_variants("false"), False),
    "1": True,
    "0": False,
}


def _to_int(text: str) -> Any:
    return int(text) if len(text) <= MAX_DIGIT_STRING_LENGTH and _INTEGER_TEXT.fullmatch(text) else _NO_VALUE


def _to_float(text: str) -> Any:
    if not _NUMBER_TEXT.fullmatch(text):
        return _NO_VALUE
    number = float(text)
    return number if math.isfinite(number) else _NO_VALUE


# The explicit conversions of a string to a number; each returns _NO_VALUE where there is none.
# (Booleans are a lookup in _BOOLEAN_TEXT, inline in the generated plan.)
_NUMBER_CONVERSIONS: dict[str, Callable[[str], Any]] = {"int": _to_int, "float": _to_float}


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _compile_json_accept_both(rule: Rule, policy: ConflictPolicy) -> Step:
    rule_id, name = rule.id, str(rule.from_)

    def to_text(arguments: dict[str, Any]) -> Record | None:
        value = arguments.get(name)
        if not isinstance(value, (list, dict)):
            return None
        arguments[name] = _compact_json(value)
        return (rule_id, "json_accept_both", name, "array" if isinstance(value, list) else "object", "string")

    def to_structure(arguments: dict[str, Any]) -> Record | None:
        value = arguments.get(name)
        if not isinstance(value, str):
            return None
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return None  # not JSON: leave it for validation to report
        if not isinstance(parsed, (list, dict)):
            return None
        arguments[name] = parsed
        return (rule_id, "json_accept_both", name, "string", "array" if isinstance(parsed, list) else "object")

    return to_structure if rule.coerce_to == "json" else to_text


def _payload_items(
    payload_name: str, path: tuple[str, ...], arguments: dict[str, Any]
) -> tuple[Any, list[Any], bool] | None:
    """A private copy of the payload, the array ``path`` points at, and whether it came as text."""
    raw = arguments.get(payload_name)
    if isinstance(raw, str):
        try:
            payload = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        as_text = True
    elif isinstance(raw, (list, dict)):
        payload, as_text = copy.deepcopy(raw), False
    else:
        return None
    node = payload
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    return (payload, node, as_text) if isinstance(node, list) else None


def _compile_nested(rule: Rule, change: Callable[[dict[str, Any], int], bool]) -> Step:
    payload_name, array_path = str(rule.in_payload), str(rule.array_path)
    path = tuple(array_path[:-2].split(".")) if array_path != "[]" else ()
    to = rule.to if rule.type == "nested_alias" else rule.value
    record = (rule.id, rule.type, f"{payload_name}.{array_path}.{rule.from_}", rule.from_, to)

    def apply(arguments: dict[str, Any]) -> Record | None:
        found = _payload_items(payload_name, path, arguments)
        if found is None:
            return None
        payload, items, as_text = found
        changed = [change(item, index) for index, item in enumerate(items) if isinstance(item, dict)]
        if not any(changed):
            return None
        # A payload that came as text goes back as text; one that came as structure stays structure.
        arguments[payload_name] = _compact_json(payload) if as_text else payload
        return record

    return apply


def _compile_nested_alias(rule: Rule, policy: ConflictPolicy) -> Step:
    rule_id, source, target = rule.id, str(rule.from_), str(rule.to)

    def rename(item: dict[str, Any], index: int) -> bool:
        if source not in item:
            return False
        if target in item and not _same_value(item[target], item[source]):
            if policy == "keep_target":
                del item[source]
                return True
            raise NormalizationConflict(
                f"rule {rule_id!r}: item {index} has both {source!r} ({item[source]!r}) and {target!r} "
                f"({item[target]!r}); refusing to drop either"
            )
        item[target] = item.pop(source)
        return True

    return _compile_nested(rule, rename)


def _compile_nested_default(rule: Rule, policy: ConflictPolicy) -> Step:
    key, value = str(rule.from_), rule.value

    def fill(item: dict[str, Any], index: int) -> bool:
        if key in item:
            return False
        item[key] = value.replace("{{index}}", str(index)) if isinstance(value, str) else copy.deepcopy(value)
        return True

    return _compile_nested(rule, fill)


_STEPS: dict[str, Callable[[Rule, ConflictPolicy], Step]] = {
    "json_accept_both": _compile_json_accept_both,
    "nested_alias": _compile_nested_alias,
    "nested_default": _compile_nested_default,
}
_ATOMS = (str, int, float, bool, type(None))  # default values a call can share without a copy


def _rule_source(rule: Rule, index: int, policy: ConflictPolicy, namespace: dict[str, Any]) -> list[str]:
    """The generated lines applying ``rule``, the normalizer's rule number ``index``, to ``arguments``:
    when it changes something, it appends its record to ``records`` and sets its bit in ``fired``.

    Names and ids enter the source only as ``repr`` of strings (and tuples of strings), so they are
    always literals; every other value is bound in ``namespace``.
    """
    bit = 1 << index
    param = repr(rule.in_payload if rule.type.startswith("nested") else rule.from_)
    if rule.type == "param_alias":
        namespace[f"_both_sent{index}"] = _alias_both_sent(rule, policy)
        target, record = repr(rule.to), repr((rule.id, rule.type, rule.from_, rule.from_, rule.to))
        return [
            f"if {param} in arguments:",
            f"    if {target} not in arguments:",
            f"        arguments[{target}] = arguments[{param}]",  # subscripts: a little cheaper than pop()
            f"        del arguments[{param}]",
            f"        records.append({record})",
            "    else:",
            f"        records.append(_both_sent{index}(arguments))",
            f"    fired |= {bit}",
        ]
    if rule.type == "param_default":
        namespace[f"_value{index}"] = rule.value
        namespace[f"_record{index}"] = (rule.id, rule.type, rule.from_, None, rule.value)
        value = f"_value{index}" if isinstance(rule.value, _ATOMS) else f"_deepcopy(_value{index})"
        return [
            f"if {param} not in arguments:",
            f"    arguments[{param}] = {value}",
            f"    records.append(_record{index})",
            f"    fired |= {bit}",
        ]
    if rule.type == "type_coerce":
        record = f"({rule.id!r}, 'type_coerce', {param}, value, converted)"
        if rule.coerce_to == "bool":
            # One lookup gives the record, built in advance for each accepted spelling.
            namespace[f"_spellings{index}"] = {
                text: (rule.id, "type_coerce", rule.from_, text, flag) for text, flag in _BOOLEAN_TEXT.items()
            }
            return [
                f"value = arguments.get({param})",
                f"if value.__class__ is str and value in _spellings{index}:",  # absent or not a string: no change
                f"    record = _spellings{index}[value]",
                f"    arguments[{param}] = record[4]",
                "    records.append(record)",
                f"    fired |= {bit}",
            ]
        namespace[f"_convert{index}"] = _NUMBER_CONVERSIONS[str(rule.coerce_to)]
        return [
            f"value = arguments.get({param})",
            "if value.__class__ is str:",
            f"    converted = _convert{index}(value)",
            "    if converted is not _NO_VALUE:",
            f"        arguments[{param}] = converted",
            f"        records.append({record})",
            f"        fired |= {bit}",
        ]
    namespace[f"_step{index}"] = _STEPS[rule.type](rule, policy)
    # A cheap guard first: the step runs only when the parameter could need it.
    if rule.type == "json_accept_both" and rule.coerce_to == "json":
        guard = f"arguments.get({param}).__class__ is str"
    elif rule.type == "json_accept_both":
        guard = f"isinstance(arguments.get({param}), _STRUCTURES)"
    else:
        guard = f"{param} in arguments"
    return [
        f"if {guard}:",
        f"    record = _step{index}(arguments)",
        "    if record is not None:",
        "        records.append(record)",
        f"        fired |= {bit}",
    ]


# A generated plan is called as plan(tool, signature, arguments), where ``signature`` is the tool's
# number shifted past the rules' bits (see `_Stats`); each tool binds its own with `partial`.
Plan = Callable[[str, int, Mapping[str, Any]], NormalizeResult]


def _log_normalized(tool: str, records: list[Record]) -> None:
    rule_ids = [record[0] for record in records]
    applied = [_entry(record) for record in records]
    logger.info(
        "normalized %s arguments: %s",
        tool,
        ", ".join(rule_ids),
        extra={"tool": tool, "rule_ids": rule_ids, "applied": applied},
    )


def _plan(rules: Sequence[tuple[int, Rule]], policy: ConflictPolicy, stats: _Stats) -> Plan:
    """One generated function that normalizes a copy of a call's arguments and counts the call.

    ``rules`` are the applicable rules, each with its number in the normalizer: a rule that fires
    sets its bit in the call's signature.

    Each rule's usual change is inline, behind a cheap guard; only rare or heavy paths (both alias
    names sent, JSON payloads) call a step. Generating source is the technique dataclasses and attrs
    use; it is what lets normalizing cost less than validating the call it normalizes.
    """
    namespace: dict[str, Any] = {
        "_STRUCTURES": (list, dict),
        "_BOOLEAN_TEXT": _BOOLEAN_TEXT,
        "_NO_VALUE": _NO_VALUE,
        "_deepcopy": copy.deepcopy,
        "_time": time.time,
        "_clock": stats.clock,
        "_events": stats.events,
        "_add_event": stats.events.append,
        "_add_recent": stats.recent.append,
        "_FOLD_EVERY": stats.FOLD_EVERY,
        "_fold": stats.fold,
        "_log_enabled": logger.isEnabledFor,
        "_INFO": logging.INFO,
        "_log_normalized": _log_normalized,
        "_new": object.__new__,
        "_Result": NormalizeResult,
        "_Conflict": NormalizationConflict,
    }
    body = [line for index, rule in rules for line in _rule_source(rule, index, policy, namespace)]
    source = [
        "def plan(tool, signature, arguments):",
        "    arguments = dict(arguments)",
        "    records = []",
        "    fired = signature",
        "    try:",
        *(f"        {line}" for line in body or ["pass"]),
        "    except _Conflict:",
        "        _clock[0] = _time()",
        "        _add_event(signature)",  # processed, and not normalized
        "        raise",
        "    _clock[0] = now = _time()",
        "    _add_event(fired)",
        "    if len(_events) >= _FOLD_EVERY:",
        "        _fold()",
        "    if records:",
        "        _add_recent((now, fired, records))",
        "        if _log_enabled(_INFO):",
        "            _log_normalized(tool, records)",
        # A NormalizeResult whose `applied` is built from the records when read (skipping __init__)
        "    result = _new(_Result)",
        "    result.arguments = arguments",
        "    result._records = records",
        "    result._applied = None",
        "    return result",
    ]
    exec("\n".join(source), namespace)
    plan: Plan = namespace["plan"]
    return plan


def _timestamp(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Stats:
    """Counters behind `Normalizer.stats`.

    A call appends its *signature* to ``events`` and, if rules changed something, ``(time,
    signature, records)`` to the bounded ``recent``; ``deque.append`` is thread-safe. The signature
    is one int: bit ``k`` is set when ``rules[k]`` fired, and the bits above the rules' hold the
    tool's number (`tool_signature`), so counting a call is counting an int. Events are folded into
    counts in bulk, under ``lock``, every ``FOLD_EVERY`` calls and before every read, so each is
    counted exactly once; `snapshot` expands them into the documented per-tool and per-rule counts.
    ``clock[0]`` is the time of the latest call. Counts restored from a saved file are a base that
    snapshots add to.
    """

    FOLD_EVERY = 256

    def __init__(self, recent_limit: int, rules: Sequence[Rule]) -> None:
        self.lock = threading.Lock()
        self.events: deque[int] = deque()
        self.rules = tuple(rules)
        self.tools: list[str] = []  # by number
        self.calls: Counter[int] = Counter()
        self.recent: deque[tuple[float, int, Sequence[Record]]] = deque(maxlen=recent_limit)
        self.clock: list[float | None] = [None]
        self.base: dict[str, Any] = {}

    def tool_signature(self, tool: str) -> int:
        """The signature of a call to ``tool`` that no rule changed."""
        with self.lock:
            self.tools.append(tool)
            return (len(self.tools) - 1) << len(self.rules)

    def fold(self) -> None:
        with self.lock:
            events = self.events
            # Only fold pops, and it holds the lock: these events stay put while we take them.
            self.calls.update(itertools.starmap(events.popleft, itertools.repeat((), len(events))))

    def snapshot(self) -> dict[str, Any]:
        self.fold()
        with self.lock:
            base = copy.deepcopy(self.base)
            calls, recent, last_updated = dict(self.calls), self.recent.copy(), self.clock[0]  # copy: one atomic step
            tools, rule_bits = list(self.tools), len(self.rules)
        by_tool: dict[str, dict[str, int]] = base.get("by_tool", {})
        by_rule: dict[str, dict[str, Any]] = base.get("by_rule", {})
        processed, normalized = base.get("total_processed", 0), base.get("total_normalized", 0)
        for signature, count in calls.items():
            tool, fired = tools[signature >> rule_bits], signature & ~(-1 << rule_bits)
            counts = by_tool.setdefault(tool, {"processed": 0, "normalized": 0})
            processed += count
            counts["processed"] += count
            if not fired:
                continue
            normalized += count
            counts["normalized"] += count
            for position, rule in enumerate(self.rules):
                if not fired >> position & 1:
                    continue
                hits = by_rule.setdefault(rule.id, {"rule_id": rule.id, "type": rule.type, "hits": 0, "tools": []})
                hits["hits"] += count
                if tool not in hits["tools"]:
                    hits["tools"].append(tool)
        saved_recent = base.get("recent_normalizations", [])
        fresh = [
            {"ts": _timestamp(ts), "tool": tools[signature >> rule_bits], "applied": [_entry(r) for r in records]}
            for ts, signature, records in recent
        ]
        return {
            "total_processed": processed,
            "total_normalized": normalized,
            "last_updated": _timestamp(last_updated) if last_updated is not None else base.get("last_updated"),
            "by_tool": by_tool,
            "by_rule": by_rule,
            "recent_normalizations": copy.deepcopy((saved_recent + fresh)[-(self.recent.maxlen or 0) :]),
        }

    def restore(self, saved: Mapping[str, Any]) -> None:
        self.fold()
        with self.lock:
            self.base = copy.deepcopy(
                {
                    "total_processed": int(saved.get("total_processed", 0)),
                    "total_normalized": int(saved.get("total_normalized", 0)),
                    "last_updated": saved.get("last_updated"),
                    "by_tool": dict(saved.get("by_tool", {})),
                    "by_rule": dict(saved.get("by_rule", {})),
                    "recent_normalizations": list(saved.get("recent_normalizations", [])),
                }
            )
            self.calls = Counter()
            self.recent.clear()
            self.clock[0] = None


_M = TypeVar("_M", bound=BaseModel)


class Normalizer:
    """Applies rules, in order (`BUILTIN_RULES`, then ``rules``), to a tool's arguments.

    ``on_conflict="error"`` (the default) refuses an alias whose source and target were both sent
    with different values; ``"keep_target"`` keeps the target and records what it dropped.
    ``stats_file``, when given, restores the counts saved there and is where `save` writes.
    """

    recent_limit: ClassVar[int] = 50

    def __init__(
        self,
        rules: Iterable[Rule | Mapping[str, Any]] = (),
        *,
        builtin: Iterable[Rule] = BUILTIN_RULES,
        on_conflict: ConflictPolicy = "error",
        stats_file: str | os.PathLike[str] | None = None,
    ) -> None:
        if on_conflict not in ("error", "keep_target"):
            raise ValueError(f"on_conflict must be 'error' or 'keep_target', not {on_conflict!r}")
        loaded = [*builtin, *(rule if isinstance(rule, Rule) else Rule.from_dict(rule) for rule in rules)]
        seen: set[str] = set()
        for rule in loaded:
            if rule.id in seen:
                raise RuleError(f"rule {rule.id!r}: duplicate id")
            seen.add(rule.id)
        self.rules: tuple[Rule, ...] = tuple(loaded)
        self.on_conflict: ConflictPolicy = on_conflict
        self.stats_file = Path(stats_file) if stats_file is not None else None
        self._stats = _Stats(self.recent_limit, loaded)
        # Tools that no rule names share one plan, so unknown tool names compile nothing.
        self._named_tools = frozenset(tool for rule in loaded for tool in rule.tools) - {"*"}
        self._any_tool_plan = _plan(
            [(i, rule) for i, rule in enumerate(loaded) if "*" in rule.tools], on_conflict, self._stats
        )
        # Each tool's plan with its signature bound: what `apply` calls.
        self._plans: dict[str, functools.partial[NormalizeResult]] = {}
        self._plans_lock = threading.Lock()
        self._autosave: tuple[threading.Thread, threading.Event] | None = None
        if self.stats_file is not None and self.stats_file.exists():
            self.restore_stats(self.stats_file)

    @classmethod
    def from_json(cls, text: str, **options: Any) -> Normalizer:
        """Rules from JSON text: a list of rules, or ``{"rules": [...]}``."""
        try:
            data = json.loads(text)
        except ValueError as error:
            raise RuleError(f"rules are not valid JSON: {error}") from None
        if isinstance(data, Mapping) and set(data) == {"rules"}:
            data = data["rules"]
        if not isinstance(data, list):
            raise RuleError("rules must be a JSON list of rules, or an object with a 'rules' list")
        return cls(data, **options)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **options: Any) -> Normalizer:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise RuleError(f"cannot read rules from {path}: {error.strerror}") from None
        return cls.from_json(text, **options)

    def _plan_for(self, tool: str) -> functools.partial[NormalizeResult]:
        with self._plans_lock:
            if (bound := self._plans.get(tool)) is not None:
                return bound
            if tool in self._named_tools:
                applicable = [(i, rule) for i, rule in enumerate(self.rules) if rule.applies_to(tool)]
                plan = _plan(applicable, self.on_conflict, self._stats)
            else:
                plan = self._any_tool_plan
            bound = self._plans[tool] = functools.partial(plan, tool, self._stats.tool_signature(tool))
            return bound

    def apply(self, tool: str, arguments: Mapping[str, Any]) -> NormalizeResult:
        """Normalize ``arguments`` for ``tool``. The input is never mutated.

        Raises `NormalizationConflict` when an alias's source and target were both sent with
        different values (under ``on_conflict="error"``).
        """
        plan = self._plans.get(tool)
        if plan is None:
            plan = self._plan_for(tool)
        return plan(arguments)

    # ---- models

    def attach(self, tool: str) -> Callable[[type[_M]], type[_M]]:
        """Class decorator: the model normalizes its raw input for ``tool`` before validating it.

        ``@normalizer.attach("edit_file")`` on a model returns a subclass with a before-validator,
        so ``Model.model_validate(raw)`` normalizes, then validates.
        """

        def decorate(model: type[_M]) -> type[_M]:
            def normalize(cls: type[BaseModel], data: Any) -> Any:
                return self.apply(tool, data).arguments if isinstance(data, Mapping) else data

            validator = model_validator(mode="before")(classmethod(normalize))  # type: ignore[arg-type]
            namespace = {"__module__": model.__module__, "__doc__": model.__doc__, "_normalize_arguments": validator}
            return type(model.__name__, (model,), namespace)

        return decorate

    # ---- stats

    def stats(self) -> dict[str, Any]:
        """``{total_processed, total_normalized, last_updated, by_tool, by_rule, recent_normalizations}``."""
        return self._stats.snapshot()

    def restore_stats(self, path: str | os.PathLike[str]) -> None:
        """Load counts saved by `save`, so they carry across restarts."""
        self._stats.restore(json.loads(Path(path).read_text(encoding="utf-8")))

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the stats atomically (a temporary file beside the target, then a rename)."""
        target = Path(path) if path is not None else self.stats_file
        if target is None:
            raise ValueError("no path given, and the normalizer has no stats_file")
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(self.stats(), file, ensure_ascii=False, indent=2)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return target

    def autosave(self, every: float, path: str | os.PathLike[str] | None = None) -> None:
        """Save the stats every ``every`` seconds on a daemon thread, until `close`."""
        if every <= 0:
            raise ValueError("every must be a positive number of seconds")
        if path is not None:
            self.stats_file = Path(path)
        if self.stats_file is None:
            raise ValueError("no path given, and the normalizer has no stats_file")
        self.close(save=False)
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(every):
                self.save()

        thread = threading.Thread(target=loop, name="pydantic-lenient-stats", daemon=True)
        thread.start()
        self._autosave = (thread, stop)

    def close(self, *, save: bool = True) -> None:
        """Stop autosaving; save once more if there is a stats file."""
        if self._autosave is not None:
            thread, stop = self._autosave
            stop.set()
            thread.join()
            self._autosave = None
        if save and self.stats_file is not None:
            self.save()


def rules_from_model(model: type[BaseModel], tool: str) -> list[Rule]:
    """Rules a model implies for ``tool``.

    * A field whose ``validation_alias`` is an ``AliasChoices`` gets a ``param_alias`` rule from each
      other name to the first one, so the model can advertise one name and still take the others.
    * A ``bool``, ``int`` or ``float`` field that is not lenient gets a ``type_coerce`` rule.
    """
    from pydantic import AliasChoices

    from ._annotations import is_lenient, lenient_scalar, split_annotated

    rules: list[Rule] = []
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names = [choice for choice in alias.choices if isinstance(choice, str)]
            rules.extend(
                Rule(f"{tool}.{name}.alias.{other}", (tool,), "param_alias", from_=other, to=names[0])
                for other in names[1:]
            )
        base, metadata = split_annotated(info.annotation)
        metadata = tuple(info.metadata) + metadata
        if is_lenient(metadata):
            continue
        kind = lenient_scalar(base, metadata)
        coerce_to = {"StrictBoolish": "bool", "LenientFloat": "float"}.get(kind or "", "int" if kind else None)
        if coerce_to is not None:
            key = info.alias or name
            rules.append(Rule(f"{tool}.{name}.coerce", (tool,), "type_coerce", from_=key, coerce_to=coerce_to))
    return rules
