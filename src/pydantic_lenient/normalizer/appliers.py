"""How each rule type applies to a call: one class per type, and the `Change` each one records.

Each rule type is one class holding what a rule of it does to a call: ``apply`` edits a call's
arguments (a private copy) and returns the changes it made. The fields each type takes, and what
makes a rule of it meaningless, are checked at load (`pydantic_lenient.normalizer.rules.RULE_SHAPES`).
`resolve_alias` is the one place where a rename meets a call that sent both names; top-level and
nested aliases share it.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_lenient.types.boolean_text import BOOLEAN_DIGITS
from pydantic_lenient.types.forms import JSON_NUMBER_TEXT, MAX_DIGIT_STRING_LENGTH

from ._json import ABSENT, read_json_text, same_json_value, short_repr, write_json_text
from .rules import Rule, RuleType

__all__ = (
    "RULE_APPLIERS",
    "Change",
    "ConflictPolicy",
    "NormalizationConflict",
    "RuleApplier",
    "applier_for",
)

ConflictPolicy = Literal["error", "keep_target"]

_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_NUMBER_TEXT = re.compile(JSON_NUMBER_TEXT)


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


# ---- one class per rule type

_NO_CHANGE: tuple[Change, ...] = ()


class RuleApplier:
    """What every rule type class has: the rule and the conflict policy it applies, and ``apply``."""

    def __init__(self, rule: Rule, policy: ConflictPolicy) -> None:
        self.rule, self.policy = rule, policy

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

    def __init__(self, rule: Rule, policy: ConflictPolicy) -> None:
        super().__init__(rule, policy)
        self.summary = Change(rule.id, "nested_default", self.item_param(None), None, rule.value)

    def edit(self, item: dict[str, Any], index: int) -> Change | None:
        if self.key in item:
            return None
        value = self.rule.value
        item[self.key] = value.replace("{{index}}", str(index)) if type(value) is str else copy.deepcopy(value)
        return self.summary


RULE_APPLIERS: dict[str, type[RuleApplier]] = {
    "param_alias": ParamAlias,
    "param_default": ParamDefault,
    "type_coerce": TypeCoerce,
    "json_accept_both": JsonAcceptBoth,
    "nested_alias": NestedAlias,
    "nested_default": NestedDefault,
}
"""The class that applies each rule type, by the type's name."""


def applier_for(rule: Rule, policy: ConflictPolicy) -> RuleApplier:
    """The object that applies ``rule`` to calls."""
    return RULE_APPLIERS[rule.type](rule, policy)
