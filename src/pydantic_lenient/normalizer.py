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
import json
import logging
import math
import operator
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
from typing import Any, ClassVar, Literal, NamedTuple, TypeVar, get_args

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
# Explicit spellings only: no truthiness, so "false", "0" and "" can never become True.
_BOOLEAN_TEXT = {"true": True, "1": True, "false": False, "0": False}
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


class NormalizeResult(NamedTuple):
    """``arguments``: a new object, normalized; ``applied``: one ``{rule_id, type, param, from, to}``
    per rule that changed something."""

    arguments: dict[str, Any]
    applied: list[dict[str, Any]]


ConflictPolicy = Literal["error", "keep_target"]
# A rule compiled for one conflict policy: it edits the arguments (a private copy) in place and
# returns what it did, or None. Rules are compiled once, so a call pays no dispatch or lookups.
Step = Callable[[dict[str, Any]], "dict[str, Any] | None"]


def _compile_param_alias(rule: Rule, policy: ConflictPolicy) -> Step:
    rule_id, source, target = rule.id, str(rule.from_), str(rule.to)

    def rename(arguments: dict[str, Any]) -> dict[str, Any] | None:
        if source not in arguments:
            return None
        entry = {"rule_id": rule_id, "type": "param_alias", "param": source, "from": source, "to": target}
        if target not in arguments:
            arguments[target] = arguments.pop(source)
        elif arguments[target] == arguments[source]:
            del arguments[source]
            entry["note"] = "same value sent under both names; kept one"
        elif policy == "keep_target":
            entry["note"] = f"conflict: kept {target}, dropped {source}={arguments.pop(source)!r}"
        else:
            raise NormalizationConflict(
                f"rule {rule_id!r}: got both {source!r} ({arguments[source]!r}) and {target!r} "
                f"({arguments[target]!r}); refusing to drop either"
            )
        return entry

    return rename


def _compile_param_default(rule: Rule, policy: ConflictPolicy) -> Step:
    rule_id, name, value = rule.id, str(rule.from_), rule.value

    def fill(arguments: dict[str, Any]) -> dict[str, Any] | None:
        if name in arguments:
            return None
        arguments[name] = copy.deepcopy(value)
        return {"rule_id": rule_id, "type": "param_default", "param": name, "from": None, "to": value}

    return fill


def _to_bool(text: str) -> Any:
    return _BOOLEAN_TEXT.get(text.lower() if text.isascii() else text, _NO_VALUE)


def _to_int(text: str) -> Any:
    return int(text) if len(text) <= MAX_DIGIT_STRING_LENGTH and _INTEGER_TEXT.fullmatch(text) else _NO_VALUE


def _to_float(text: str) -> Any:
    if not _NUMBER_TEXT.fullmatch(text):
        return _NO_VALUE
    number = float(text)
    return number if math.isfinite(number) else _NO_VALUE


# The explicit conversions of a string, by target; each returns _NO_VALUE where there is none.
_CONVERSIONS: dict[str, Callable[[str], Any]] = {"bool": _to_bool, "int": _to_int, "float": _to_float}


def _compile_type_coerce(rule: Rule, policy: ConflictPolicy) -> Step:
    rule_id, name = rule.id, str(rule.from_)
    convert = _CONVERSIONS[str(rule.coerce_to)]

    def coerce(arguments: dict[str, Any]) -> dict[str, Any] | None:
        before = arguments.get(name)
        if before.__class__ is not str:  # absent, or not a string: nothing to coerce
            return None
        after = convert(before)
        if after is _NO_VALUE:
            return None
        arguments[name] = after
        return {"rule_id": rule_id, "type": "type_coerce", "param": name, "from": before, "to": after}

    return coerce


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _compile_json_accept_both(rule: Rule, policy: ConflictPolicy) -> Step:
    rule_id, name = rule.id, str(rule.from_)

    def to_text(arguments: dict[str, Any]) -> dict[str, Any] | None:
        value = arguments.get(name)
        if not isinstance(value, (list, dict)):
            return None
        arguments[name] = _compact_json(value)
        before = "array" if isinstance(value, list) else "object"
        return {"rule_id": rule_id, "type": "json_accept_both", "param": name, "from": before, "to": "string"}

    def to_structure(arguments: dict[str, Any]) -> dict[str, Any] | None:
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
        after = "array" if isinstance(parsed, list) else "object"
        return {"rule_id": rule_id, "type": "json_accept_both", "param": name, "from": "string", "to": after}

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
    entry = {
        "rule_id": rule.id,
        "type": rule.type,
        "param": f"{payload_name}.{array_path}.{rule.from_}",
        "from": rule.from_,
        "to": rule.to if rule.type == "nested_alias" else rule.value,
    }

    def apply(arguments: dict[str, Any]) -> dict[str, Any] | None:
        found = _payload_items(payload_name, path, arguments)
        if found is None:
            return None
        payload, items, as_text = found
        changed = [change(item, index) for index, item in enumerate(items) if isinstance(item, dict)]
        if not any(changed):
            return None
        # A payload that came as text goes back as text; one that came as structure stays structure.
        arguments[payload_name] = _compact_json(payload) if as_text else payload
        return dict(entry)

    return apply


def _compile_nested_alias(rule: Rule, policy: ConflictPolicy) -> Step:
    rule_id, source, target = rule.id, str(rule.from_), str(rule.to)

    def rename(item: dict[str, Any], index: int) -> bool:
        if source not in item:
            return False
        if target in item and item[target] != item[source]:
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


def _guard(rule: Rule) -> str:
    """A Python expression over ``arguments`` that is false whenever the rule cannot apply.

    Names and ids enter the generated code only through ``repr`` of strings and dicts of strings,
    so they are always literals.
    """
    name = repr(rule.in_payload if rule.type.startswith("nested") else rule.from_)
    if rule.type == "param_default":
        return f"{name} not in arguments"
    if rule.type == "type_coerce" or (rule.type == "json_accept_both" and rule.coerce_to == "json"):
        return f"arguments.get({name}).__class__ is str"
    if rule.type == "json_accept_both":
        return f"isinstance(arguments.get({name}), _STRUCTURES)"
    return f"{name} in arguments"


Plan = Callable[[dict[str, Any], list[dict[str, Any]], list[str]], None]


def _plan(rules: Sequence[tuple[Rule, Step]]) -> Plan:
    """One function applying ``rules`` in order, with each rule's cheap guard inline.

    A call pays a function call only for the rules whose guard passes, which is what lets a
    normalizer cost less than validating the call it normalizes. The generated source is built
    from `_guard` expressions alone (the technique dataclasses and attrs use).
    """
    namespace: dict[str, Any] = {"_STRUCTURES": (list, dict)}
    lines = ["def plan(arguments, applied, fired):"]
    for index, (rule, step) in enumerate(rules):
        namespace[f"_step{index}"] = step
        call_step = [
            f"entry = _step{index}(arguments)",
            "if entry is not None:",
            "    applied.append(entry)",
            f"    fired.append({rule.id!r})",
        ]
        lines.append(f"    if {_guard(rule)}:")
        if rule.type == "param_alias":
            # The usual rename (the target not sent) inline; both sent goes to the step's checks.
            source, target = repr(rule.from_), repr(rule.to)
            entry = repr(
                {"rule_id": rule.id, "type": rule.type, "param": rule.from_, "from": rule.from_, "to": rule.to}
            )
            lines += [
                f"        if {target} not in arguments:",
                f"            arguments[{target}] = arguments.pop({source})",
                f"            applied.append({entry})",
                f"            fired.append({rule.id!r})",
                "        else:",
                *(f"            {line}" for line in call_step),
            ]
        else:
            lines += [f"        {line}" for line in call_step]
    if not rules:
        lines.append("    pass")
    exec("\n".join(lines), namespace)
    plan: Plan = namespace["plan"]
    return plan


_COMPILERS: dict[str, Callable[[Rule, ConflictPolicy], Step]] = {
    "param_alias": _compile_param_alias,
    "param_default": _compile_param_default,
    "type_coerce": _compile_type_coerce,
    "json_accept_both": _compile_json_accept_both,
    "nested_alias": _compile_nested_alias,
    "nested_default": _compile_nested_default,
}


def _timestamp(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Stats:
    """Counters behind `Normalizer.stats`.

    A call only appends an event to a deque (``deque.append`` is thread-safe); events are folded
    into the counters in bulk, under ``lock``, every ``_FOLD_EVERY`` calls and before every read,
    so each is counted exactly once. A call with rules applied is counted by its *signature*: the
    tool and the ids of the rules that fired. `snapshot` expands signatures into the documented
    per-tool and per-rule counts. Counts restored from a saved file are a base that snapshots add to.
    """

    _FOLD_EVERY = 256

    def __init__(self, recent_limit: int, rule_types: Mapping[str, str]) -> None:
        self.lock = threading.Lock()
        self.events: deque[tuple[float, str, tuple[str, ...] | None, list[dict[str, Any]]]] = deque()
        self.last_updated: float | None = None
        self.processed: Counter[str] = Counter()
        self.signatures: Counter[tuple[str, tuple[str, ...]]] = Counter()
        self.rule_types = dict(rule_types)
        self.recent: deque[tuple[float, str, tuple[str, ...] | None, list[dict[str, Any]]]] = deque(maxlen=recent_limit)
        self.base: dict[str, Any] = {}

    def record(self, tool: str, fired: tuple[str, ...] | None, applied: list[dict[str, Any]]) -> None:
        """Count one call: ``fired`` is the ids of the rules that changed something (None: none did)."""
        events = self.events
        events.append((time.time(), tool, fired, applied))
        if len(events) >= self._FOLD_EVERY:
            self.fold()

    def fold(self) -> None:
        with self.lock:
            events = self.events
            # Only fold pops, and it holds the lock: these events stay put while we take them.
            batch = [events.popleft() for _ in range(len(events))]
            if not batch:
                return
            self.processed.update(map(_TOOL, batch))
            normalized = [event for event in batch if event[2]]
            self.signatures.update(map(_SIGNATURE, normalized))
            self.recent.extend(normalized)
            self.last_updated = max(self.last_updated or 0.0, batch[-1][0])

    def snapshot(self) -> dict[str, Any]:
        self.fold()
        with self.lock:
            base = copy.deepcopy(self.base)
            processed, signatures = dict(self.processed), dict(self.signatures)
            rule_types, recent, last_updated = self.rule_types, list(self.recent), self.last_updated
        by_tool: dict[str, dict[str, int]] = base.get("by_tool", {})
        by_rule: dict[str, dict[str, Any]] = base.get("by_rule", {})
        for tool, count in processed.items():
            by_tool.setdefault(tool, {"processed": 0, "normalized": 0})["processed"] += count
        normalized = base.get("total_normalized", 0)
        for (tool, rule_ids), count in signatures.items():
            normalized += count
            by_tool[tool]["normalized"] += count
            for rule_id in rule_ids:
                rule = by_rule.setdefault(
                    rule_id, {"rule_id": rule_id, "type": rule_types[rule_id], "hits": 0, "tools": []}
                )
                rule["hits"] += count
                if tool not in rule["tools"]:
                    rule["tools"].append(tool)
        saved_recent = base.get("recent_normalizations", [])
        fresh = [{"ts": _timestamp(ts), "tool": tool, "applied": applied} for ts, tool, _, applied in recent]
        return {
            "total_processed": base.get("total_processed", 0) + sum(processed.values()),
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
            self.processed, self.signatures = Counter(), Counter()
            self.recent.clear()
            self.last_updated = None


_TOOL = operator.itemgetter(1)
_SIGNATURE = operator.itemgetter(1, 2)  # (tool, ids of the rules that fired)


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
        self._compiled = tuple((rule, _COMPILERS[rule.type](rule, on_conflict)) for rule in loaded)
        self._plans: dict[str, Plan] = {}
        self._stats = _Stats(self.recent_limit, {rule.id: rule.type for rule in loaded})
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

    def _plan_for(self, tool: str) -> Plan:
        plan = self._plans.get(tool)
        if plan is None:
            plan = self._plans[tool] = _plan([(rule, step) for rule, step in self._compiled if rule.applies_to(tool)])
        return plan

    def apply(self, tool: str, arguments: Mapping[str, Any]) -> NormalizeResult:
        """Normalize ``arguments`` for ``tool``. The input is never mutated."""
        normalized = dict(arguments)
        applied: list[dict[str, Any]] = []
        fired: list[str] = []
        try:
            self._plan_for(tool)(normalized, applied, fired)
        except NormalizationConflict:
            self._stats.record(tool, None, [])  # processed, and not normalized
            raise
        self._stats.record(tool, tuple(fired) if fired else None, applied)
        if applied and logger.isEnabledFor(logging.INFO):
            logger.info(
                "normalized %s arguments: %s",
                tool,
                ", ".join(entry["rule_id"] for entry in applied),
                extra={"tool": tool, "rule_ids": [entry["rule_id"] for entry in applied], "applied": applied},
            )
        return tuple.__new__(NormalizeResult, (normalized, applied))  # NamedTuple's own __new__ is slower

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
