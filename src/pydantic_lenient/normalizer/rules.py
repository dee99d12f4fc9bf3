"""Normalizer rules: the `Rule` record, one class per rule type, and the `Change` each one records.

Each rule type is one class holding its whole behaviour: the fields it takes, what makes a rule of
that type meaningless (refused at load), and ``apply``, which edits a call's arguments (a private
copy) and returns the changes it made. `resolve_alias` is the one place where a rename meets a call
that sent both names; top-level and nested aliases share it.
"""

from __future__ import annotations

import copy
import json
import math
import re
import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, get_args

from pydantic_lenient.types.boolean_text import BOOLEAN_DIGITS
from pydantic_lenient.types.json_values import DEFAULT_MAX_DEPTH
from pydantic_lenient.types.scalar import JSON_NUMBER_TEXT, MAX_DIGIT_STRING_LENGTH

__all__ = (
    "RULE_TYPES",
    "Change",
    "ConflictPolicy",
    "NormalizationConflict",
    "Rule",
    "RuleApplier",
    "RuleError",
    "RuleType",
    "applier_for",
    "json_value_problem",
    "load_json_exactly",
    "same_json_value",
    "short_repr",
)

RuleType = Literal["param_alias", "param_default", "type_coerce", "json_accept_both", "nested_alias", "nested_default"]
RULE_TYPES: tuple[RuleType, ...] = get_args(RuleType)
ConflictPolicy = Literal["error", "keep_target"]

# A rule's optional JSON fields, in the order `Rule.to_dict` writes them.
_FIELDS = ("from", "to", "coerce_to", "in_payload", "array_path", "value")
_ARRAY_PATH = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*)?\[\]")
_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_NUMBER_TEXT = re.compile(JSON_NUMBER_TEXT)


class _Absent:
    """The marker for "no value": a rule without ``value``, a change that dropped nothing."""

    def __repr__(self) -> str:
        return "<no value>"


ABSENT: Any = _Absent()


class RuleError(ValueError):
    """A rule that cannot be loaded; the message names the rule (and the file, when there is one).

    >>> from pydantic_lenient import Normalizer
    >>> Normalizer([{"id": "r1", "tools": ["*"], "type": "param_rename", "from": "a", "to": "b"}])
    Traceback (most recent call last):
      ...
    pydantic_lenient...RuleError: rule 'r1': ...
    """


class NormalizationConflict(ValueError):
    """An alias's source and target were both sent, with different values.

    >>> from pydantic_lenient import Normalizer
    >>> alias = {"id": "old", "tools": ["*"], "type": "param_alias", "from": "old_str", "to": "old_text"}
    >>> normalizer = Normalizer([alias])
    >>> normalizer.apply("edit_file", {"old_str": "a", "old_text": "b"})
    Traceback (most recent call last):
      ...
    pydantic_lenient...NormalizationConflict: ...
    """


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxdict, _SHORT.maxlist = 3, 60, 60, 4, 4


def short_repr(value: Any) -> str:
    """``repr`` cut to a readable length and depth, for messages about values from outside."""
    try:
        return _SHORT.repr(value)
    except ValueError:  # an int past Python's 4,300-digit str limit, somewhere inside
        return f"<{type(value).__name__} too large to show>"


# ---- change records


@dataclass(frozen=True, slots=True)
class Change:
    """One change a rule made to a call, as `NormalizeResult.applied` lists it.

    ``param`` names where: the parameter, or ``payload.path[].field`` (``[3]`` for one item).
    ``from_`` and ``to`` are the names of a rename, the value before and after a coercion, the
    kinds of a ``json_accept_both`` conversion, or None and the value a default filled in.
    ``dropped`` is a value the call sent that is no longer in it, and ``note`` says why.
    """

    rule_id: str
    type: RuleType
    param: str
    from_: Any
    to: Any
    note: str | None = None
    dropped: Any = ABSENT

    def as_dict(self) -> dict[str, Any]:
        """The documented JSON shape: ``rule_id, type, param, from, to`` (+ ``note``, ``dropped``)."""
        to = copy.deepcopy(self.to) if self.type in _DEFAULT_TYPES else self.to  # the rule's own value
        entry = {"rule_id": self.rule_id, "type": self.type, "param": self.param, "from": self.from_, "to": to}
        if self.note is not None:
            entry["note"] = self.note
        if self.dropped is not ABSENT:
            entry["dropped"] = self.dropped
        return entry


_DEFAULT_TYPES = frozenset({"param_default", "nested_default"})


# ---- the rule record


@dataclass(frozen=True, slots=True)
class Rule:
    """One normalization rule. JSON shape: ``id, tools, type, from, to, coerce_to, in_payload,
    array_path, value`` (``from_`` here, as ``from`` is a Python keyword).

    ``tools`` lists tool names, or ``"*"`` for every tool. What ``from`` names depends on the type:
    the parameter (or payload field) read, renamed, coerced or defaulted. Every name is an exact
    ``str`` (not a subclass), and a rule that could not mean anything is a `RuleError`.

    >>> from pydantic_lenient import Rule
    >>> data = {"id": "force", "tools": ["edit_file"], "type": "type_coerce", "from": "force", "coerce_to": "bool"}
    >>> rule = Rule.from_dict(data)
    >>> rule.applies_to("edit_file"), rule.applies_to("delete_file")
    (True, False)
    >>> Rule.from_dict({**data, "coerce_to": "yes"})
    Traceback (most recent call last):
      ...
    pydantic_lenient...RuleError: rule 'force': ...
    """

    id: str
    tools: tuple[str, ...]
    type: RuleType
    from_: str | None = None
    to: str | None = None
    coerce_to: str | None = None
    in_payload: str | None = None
    array_path: str | None = None
    value: Any = field(default=ABSENT)

    def __post_init__(self) -> None:
        name = describe_rule(self.id)
        if not _is_name(self.id):
            raise RuleError(f"{name}: id must be a non-empty string")
        if type(self.type) is not str or self.type not in RULE_TYPES:
            raise RuleError(f"{name}: unknown type {short_repr(self.type)}; expected one of {', '.join(RULE_TYPES)}")
        if type(self.tools) is not tuple or not self.tools or not all(map(_is_name, self.tools)):
            raise RuleError(f"{name}: tools must be a non-empty list of tool names, or ['*']")
        kind = _KINDS[self.type]
        given = {key for key in _FIELDS if self.get(key) is not (ABSENT if key == "value" else None)}
        if missing := sorted(kind.required - given):
            raise RuleError(f"{name}: a {self.type} rule needs {', '.join(missing)}")
        if extra := sorted(given - kind.required - kind.optional):
            raise RuleError(f"{name}: a {self.type} rule does not take {', '.join(extra)}")
        for key in ("from", "to", "in_payload"):
            if key in given and not _is_name(self.get(key)):
                raise RuleError(f"{name}: {key} must be a non-empty string")
        if "coerce_to" in given and (type(self.coerce_to) is not str or self.coerce_to not in kind.targets):
            targets = ", ".join(sorted(kind.targets))
            raise RuleError(f"{name}: coerce_to must be one of {targets}, not {short_repr(self.coerce_to)}")
        if "array_path" in given and not (type(self.array_path) is str and _ARRAY_PATH.fullmatch(self.array_path)):
            raise RuleError(f"{name}: bad array_path {short_repr(self.array_path)}; write [] or field.sub[]")
        if "value" in given and (problem := json_value_problem(self.value)) is not None:
            raise RuleError(f"{name}: value {problem}")
        if (meaningless := kind.meaningless(self)) is not None:
            raise RuleError(f"{name}: {meaningless}")

    def get(self, key: str) -> Any:
        """A field by its JSON name."""
        return getattr(self, "from_" if key == "from" else key)

    @classmethod
    def from_dict(cls, data: Any, *, position: int | None = None) -> Rule:
        """A rule from its JSON shape; unknown keys are refused, naming the rule (or its position)."""
        if not isinstance(data, Mapping):
            where = f"rule #{position}" if position is not None else "a rule"
            raise RuleError(f"{where}: a rule must be a JSON object, not {type(data).__name__}")
        name = describe_rule(data.get("id"), position)
        if unknown := sorted(str(key) for key in data if key not in ("id", "tools", "type", *_FIELDS)):
            raise RuleError(f"{name}: unknown field(s) {short_repr(', '.join(unknown))}")
        for key in ("from", "to", "coerce_to", "in_payload", "array_path"):
            if key in data and data[key] is None:
                raise RuleError(f"{name}: {key} must be a non-empty string, not null")
        tools = data.get("tools")
        try:
            return cls(
                id=data.get("id"),  # type: ignore[arg-type]  # checked in __post_init__
                tools=tuple(tools) if type(tools) is list else tools,  # type: ignore[arg-type]
                type=data.get("type"),  # type: ignore[arg-type]
                from_=data.get("from"),
                to=data.get("to"),
                coerce_to=data.get("coerce_to"),
                in_payload=data.get("in_payload"),
                array_path=data.get("array_path"),
                value=data.get("value", ABSENT),
            )
        except RuleError as error:
            message = str(error)
            if position is None or not message.startswith("a rule: "):
                raise
            raise RuleError(f"rule #{position}: {message.removeprefix('a rule: ')}") from None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "tools": list(self.tools), "type": self.type}
        for key in _FIELDS:
            if self.get(key) is not (ABSENT if key == "value" else None):
                data[key] = self.get(key)
        return data

    def applies_to(self, tool: str) -> bool:
        return "*" in self.tools or tool in self.tools


def describe_rule(rule_id: Any, position: int | None = None) -> str:
    """How messages name a rule: by its id, else by its position in the file."""
    if _is_name(rule_id):
        return f"rule {short_repr(rule_id)}"
    return f"rule #{position}" if position is not None else "a rule"


def _is_name(value: Any) -> bool:
    # Exactly str: a subclass could bring its own __eq__, __hash__ or __repr__.
    return type(value) is str and value != ""


def json_value_problem(value: Any) -> str | None:
    """Why ``value`` is not a JSON value a rule can hold (None when it is one), without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > DEFAULT_MAX_DEPTH:
            return f"is nested deeper than {DEFAULT_MAX_DEPTH} levels"
        kind = type(item)
        if kind is dict:
            if not all(type(key) is str for key in item):
                return "has an object key that is not a string"
            stack.extend((child, depth + 1) for child in item.values())
        elif kind is list:
            stack.extend((child, depth + 1) for child in item)
        elif kind is float and not math.isfinite(item):
            return "holds NaN or an infinity, which JSON has no spelling for"
        elif kind is int and item.bit_length() > 14_000:  # about Python's 4,300-digit str limit
            return "holds an integer too large to write as JSON"
        elif kind not in (str, int, float, bool, type(None)):
            return f"must be a JSON value, not {kind.__name__}"
    return None


# ---- comparing and parsing JSON values


def same_json_value(left: Any, right: Any) -> bool:
    """Equality of JSON values: unlike Python's ``==``, ``true`` is not ``1``. Iterative, for any depth."""
    pending = [(left, right)]
    while pending:
        a, b = pending.pop()
        if isinstance(a, bool) or isinstance(b, bool):
            if a is not b:
                return False
        elif isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                return False
            pending.extend((a[key], b[key]) for key in a)
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif isinstance(a, (dict, list)) or isinstance(b, (dict, list)) or a != b:
            return False
    return True


class _Unreadable(ValueError):
    """JSON that ``json.loads`` would read, but not as written: a repeated key, NaN, 1e999."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:  # reading on would silently drop the first value
            raise _Unreadable(f"the key {short_repr(key)} appears twice in one object")
        result[key] = value
    return result


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Unreadable(f"the number {short_repr(text)} is out of range")
    return number


def _no_constant(text: str) -> Any:
    raise _Unreadable(f"{text} is not JSON")


def load_json_exactly(text: str) -> Any:
    """``json.loads``, refusing what it would read lossily or as something JSON does not have (a
    repeated key, ``NaN``, a number out of range). Raises ValueError, or RecursionError when the
    text is nested too deeply."""
    return json.loads(text, object_pairs_hook=_unique_keys, parse_float=_finite, parse_constant=_no_constant)


def read_json_text(text: str) -> Any:
    """The value of JSON text (`load_json_exactly`), or `ABSENT` where that fails."""
    try:
        return load_json_exactly(text)
    except (ValueError, RecursionError):  # ValueError includes over-long integers
        return ABSENT


def write_json_text(value: Any) -> str | None:
    """Compact JSON text of ``value``, or None when it has none (NaN, a huge int, too deep)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return None


# ---- one class per rule type

_NO_CHANGE: tuple[Change, ...] = ()


class RuleApplier:
    """What every rule type class has: its fields, its load-time check, and ``apply``."""

    required: ClassVar[frozenset[str]]
    optional: ClassVar[frozenset[str]] = frozenset()
    targets: ClassVar[frozenset[str]] = frozenset()  # the values coerce_to may take

    def __init__(self, rule: Rule, policy: ConflictPolicy) -> None:
        self.rule, self.policy = rule, policy

    @classmethod
    def meaningless(cls, rule: Rule) -> str | None:
        """Why a rule of this type that has all its fields still cannot mean anything."""
        return None

    def apply(self, arguments: dict[str, Any]) -> Sequence[Change]:
        """Edit ``arguments`` (a private copy) in place; return the changes made, in order."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class AliasOutcome:
    """What `resolve_alias` did when both names were sent: it kept the target and dropped this."""

    dropped: Any
    same_value: bool


RENAMED = AliasOutcome(dropped=ABSENT, same_value=False)
"""What `resolve_alias` returns after a plain rename (compared by identity)."""


def resolve_alias(
    container: dict[str, Any], source: str, target: str, *, rule_id: str, policy: ConflictPolicy, where: str
) -> AliasOutcome | None:
    """Rename ``source`` to ``target`` in ``container`` (a private copy).

    Returns None when ``source`` is absent, `RENAMED` after a plain rename, and otherwise what
    `keep_target_of_both` returns.
    """
    if source not in container:
        return None
    if target not in container:
        container[target] = container.pop(source)
        return RENAMED
    return keep_target_of_both(container, source, target, rule_id=rule_id, policy=policy, where=where)


def keep_target_of_both(
    container: dict[str, Any], source: str, target: str, *, rule_id: str, policy: ConflictPolicy, where: str
) -> AliasOutcome:
    """Both names were sent: drop ``source`` and say what was dropped, when both hold the same JSON
    value or under ``keep_target``; otherwise raise `NormalizationConflict`."""
    sent, kept = container[source], container[target]
    same = same_json_value(sent, kept)
    if not same and policy != "keep_target":
        raise NormalizationConflict(
            f"rule {short_repr(rule_id)}: {where} has both {short_repr(source)} ({short_repr(sent)}) and "
            f"{short_repr(target)} ({short_repr(kept)}); refusing to drop either"
        )
    del container[source]
    return AliasOutcome(dropped=sent, same_value=same)


def _both_sent_change(rule: Rule, param: str, outcome: AliasOutcome) -> Change:
    target, source = str(rule.to), str(rule.from_)
    if outcome.same_value:
        note = "same value sent under both names; kept one"
    else:
        note = f"conflict: kept {target}, dropped {source}={short_repr(outcome.dropped)}"
    return Change(rule.id, rule.type, param, source, target, note=note, dropped=outcome.dropped)


class ParamAlias(RuleApplier):
    """``param_alias``: rename parameter ``from`` to ``to``."""

    required = frozenset({"from", "to"})

    @classmethod
    def meaningless(cls, rule: Rule) -> str | None:
        return "from and to are the same name" if rule.from_ == rule.to else None

    def __init__(self, rule: Rule, policy: ConflictPolicy) -> None:
        super().__init__(rule, policy)
        self.source, self.target = str(rule.from_), str(rule.to)
        self.renamed = (Change(rule.id, "param_alias", self.source, self.source, self.target),)

    def apply(self, arguments: dict[str, Any]) -> Sequence[Change]:
        source, target = self.source, self.target
        if source not in arguments:
            return _NO_CHANGE
        if target not in arguments:  # the usual case, inline: what `resolve_alias` does
            arguments[target] = arguments.pop(source)
            return self.renamed
        outcome = keep_target_of_both(
            arguments, source, target, rule_id=self.rule.id, policy=self.policy, where="the call"
        )
        return (_both_sent_change(self.rule, source, outcome),)


class ParamDefault(RuleApplier):
    """``param_default``: set parameter ``from`` to ``value`` when the call leaves it out."""

    required = frozenset({"from", "value"})

    def __init__(self, rule: Rule, policy: ConflictPolicy) -> None:
        super().__init__(rule, policy)
        self.name, self.value = str(rule.from_), rule.value
        self.shared = type(rule.value) not in (dict, list)  # a call may share an immutable default
        self.filled = (Change(rule.id, "param_default", self.name, None, rule.value),)

    def apply(self, arguments: dict[str, Any]) -> Sequence[Change]:
        if self.name in arguments:
            return _NO_CHANGE
        arguments[self.name] = self.value if self.shared else copy.deepcopy(self.value)
        return self.filled


def _integer(text: str) -> Any:
    if len(text) <= MAX_DIGIT_STRING_LENGTH and _INTEGER_TEXT.fullmatch(text):
        return int(text)
    return ABSENT


def _number(text: str) -> Any:
    if len(text) > MAX_DIGIT_STRING_LENGTH or not _NUMBER_TEXT.fullmatch(text):
        return ABSENT
    number = float(text)
    return number if math.isfinite(number) else ABSENT


class TypeCoerce(RuleApplier):
    """``type_coerce``: a string to ``bool`` (only the spellings in `BOOLEAN_DIGITS`), ``int``
    (ASCII digits, optional ``-``) or ``float`` (a finite JSON number). Anything else is left as
    sent, for validation to report."""

    required = frozenset({"from", "coerce_to"})
    targets = frozenset({"bool", "int", "float"})

    def __init__(self, rule: Rule, policy: ConflictPolicy) -> None:
        super().__init__(rule, policy)
        self.rule_id, self.name = rule.id, str(rule.from_)
        self.convert = {"int": _integer, "float": _number}.get(str(rule.coerce_to))
        # A boolean's change, made in advance for each spelling: a coercion is then one lookup.
        self.boolean_changes = (
            {text: (Change(rule.id, "type_coerce", self.name, text, flag),) for text, flag in BOOLEAN_DIGITS.items()}
            if rule.coerce_to == "bool"
            else {}
        )

    def apply(self, arguments: dict[str, Any]) -> Sequence[Change]:
        value = arguments.get(self.name)
        if type(value) is not str:  # absent, or not a string: nothing to coerce
            return _NO_CHANGE
        if self.convert is None:
            changes = self.boolean_changes.get(value, _NO_CHANGE)
            if changes:
                arguments[self.name] = changes[0].to
            return changes
        converted = self.convert(value)
        if converted is ABSENT:
            return _NO_CHANGE
        arguments[self.name] = converted
        return (Change(self.rule_id, "type_coerce", self.name, value, converted),)


def _kind_of(value: Any) -> str:
    return "array" if isinstance(value, list) else "object"


class JsonAcceptBoth(RuleApplier):
    """``json_accept_both``: take a parameter as JSON text or as structure, and convert it to one
    form: ``string`` (the default) writes structure as compact text, ``json`` reads text to
    structure. Text that is not a JSON array or object is left as sent."""

    required = frozenset({"from"})
    optional = frozenset({"coerce_to"})
    targets = frozenset({"string", "json"})

    def __init__(self, rule: Rule, policy: ConflictPolicy) -> None:
        super().__init__(rule, policy)
        self.rule_id, self.name, self.to_text = rule.id, str(rule.from_), rule.coerce_to != "json"

    def apply(self, arguments: dict[str, Any]) -> Sequence[Change]:
        value = arguments.get(self.name)
        if self.to_text:
            if not isinstance(value, (list, dict)) or (text := write_json_text(value)) is None:
                return _NO_CHANGE
            arguments[self.name] = text
            return (Change(self.rule_id, "json_accept_both", self.name, _kind_of(value), "string"),)
        if type(value) is not str or not isinstance(parsed := read_json_text(value), (list, dict)):
            return _NO_CHANGE
        arguments[self.name] = parsed
        return (Change(self.rule_id, "json_accept_both", self.name, "string", _kind_of(parsed)),)


class _Nested(RuleApplier):
    """A rule on the objects of an array inside a payload parameter, given as structure or as JSON
    text. The payload comes back in the form it came in (text is rewritten compact); items that are
    not objects are skipped; a payload that cannot be read is left for validation to report."""

    def __init__(self, rule: Rule, policy: ConflictPolicy) -> None:
        super().__init__(rule, policy)
        self.payload, self.array_path, self.key = str(rule.in_payload), str(rule.array_path), str(rule.from_)
        self.path = tuple(self.array_path[:-2].split(".")) if self.array_path != "[]" else ()
        self.summary: Change  # the one change that stands for every plain edit to the items

    def apply(self, arguments: dict[str, Any]) -> Sequence[Change]:
        raw = arguments.get(self.payload)
        as_text = isinstance(raw, str)
        found = _array_copy(read_json_text(raw) if isinstance(raw, str) else raw, self.path)
        if found is None:
            return _NO_CHANGE
        root, items = found
        edited_any, item_changes = False, []
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            edited = dict(item)
            change = self.edit(edited, index)
            if change is None:
                continue
            items[index] = edited
            if change is self.summary:
                edited_any = True
            else:
                item_changes.append(change)
        if not edited_any and not item_changes:
            return _NO_CHANGE
        if not as_text:
            arguments[self.payload] = root
        elif (text := write_json_text(root)) is not None:
            arguments[self.payload] = text
        else:
            return _NO_CHANGE
        return [self.summary, *item_changes] if edited_any else item_changes

    def edit(self, item: dict[str, Any], index: int) -> Change | None:
        """Edit one item (a private copy): `summary`, or a change of its own, or None if unchanged."""
        raise NotImplementedError

    def item_param(self, index: int | None) -> str:
        items = f"{self.array_path[:-2]}[{'' if index is None else index}]"
        return f"{self.payload}.{items}.{self.key}"


def _array_copy(payload: Any, path: tuple[str, ...]) -> tuple[Any, list[Any]] | None:
    """A copy of ``payload`` along ``path`` (each container on the way copied, nothing else) and
    the array at its end; None when there is no array there."""
    if not isinstance(payload, (dict, list)):
        return None
    root = node = copy.copy(payload)
    for part in path:
        if not isinstance(node, dict) or not isinstance(node.get(part), (dict, list)):
            return None
        node[part] = node = copy.copy(node[part])
    return (root, node) if isinstance(node, list) else None


class NestedAlias(_Nested):
    """``nested_alias``: rename field ``from`` to ``to`` in each object of the payload's array.

    One change records the renames; an item that sent both names gets its own change, naming the
    item and what was dropped (under ``on_conflict="keep_target"``, or when both values are equal).
    """

    required = frozenset({"in_payload", "array_path", "from", "to"})

    @classmethod
    def meaningless(cls, rule: Rule) -> str | None:
        return "from and to are the same name" if rule.from_ == rule.to else None

    def __init__(self, rule: Rule, policy: ConflictPolicy) -> None:
        super().__init__(rule, policy)
        self.target = str(rule.to)
        self.summary = Change(rule.id, "nested_alias", self.item_param(None), self.key, self.target)

    def edit(self, item: dict[str, Any], index: int) -> Change | None:
        where = f"item {index} of {self.payload}.{self.array_path}"
        outcome = resolve_alias(item, self.key, self.target, rule_id=self.rule.id, policy=self.policy, where=where)
        if outcome is None or outcome is RENAMED:
            return None if outcome is None else self.summary
        return _both_sent_change(self.rule, self.item_param(index), outcome)


class NestedDefault(_Nested):
    """``nested_default``: set field ``from`` to ``value`` in each object of the payload's array
    that leaves it out; ``{{index}}`` in a string value is the item's index."""

    required = frozenset({"in_payload", "array_path", "from", "value"})

    def __init__(self, rule: Rule, policy: ConflictPolicy) -> None:
        super().__init__(rule, policy)
        self.summary = Change(rule.id, "nested_default", self.item_param(None), None, rule.value)

    def edit(self, item: dict[str, Any], index: int) -> Change | None:
        if self.key in item:
            return None
        value = self.rule.value
        item[self.key] = value.replace("{{index}}", str(index)) if type(value) is str else copy.deepcopy(value)
        return self.summary


_KINDS: dict[str, type[RuleApplier]] = {
    "param_alias": ParamAlias,
    "param_default": ParamDefault,
    "type_coerce": TypeCoerce,
    "json_accept_both": JsonAcceptBoth,
    "nested_alias": NestedAlias,
    "nested_default": NestedDefault,
}


def applier_for(rule: Rule, policy: ConflictPolicy) -> RuleApplier:
    """The object that applies ``rule`` to calls."""
    return _KINDS[rule.type](rule, policy)
