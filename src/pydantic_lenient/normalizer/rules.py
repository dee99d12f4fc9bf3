"""The normalizer's `Rule` record: what a rules file holds, and refusing a rule that could not mean anything.

A rule is checked whole when it is made: its id, its tools, its type, and the fields that type
takes (`RULE_SHAPES` says which, and what else makes a rule of that type meaningless). What a
rule then does to a call is its type's class in `pydantic_lenient.normalizer.appliers`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from ._json import ABSENT, json_value_problem, short_repr

__all__ = ("RULE_SHAPES", "RULE_TYPES", "Rule", "RuleError", "RuleShape", "RuleType", "describe_rule")

RuleType = Literal["param_alias", "param_default", "type_coerce", "json_accept_both", "nested_alias", "nested_default"]
RULE_TYPES: tuple[RuleType, ...] = get_args(RuleType)

# A rule's optional JSON fields, in the order `Rule.to_dict` writes them.
_FIELDS = ("from", "to", "coerce_to", "in_payload", "array_path", "value")
_ARRAY_PATH = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*)?\[\]")


class RuleError(ValueError):
    """A rule that cannot be loaded; the message names the rule (and the file, when there is one).

    >>> from pydantic_lenient import Normalizer
    >>> Normalizer([{"id": "r1", "tools": ["*"], "type": "param_rename", "from": "a", "to": "b"}])
    Traceback (most recent call last):
      ...
    pydantic_lenient...RuleError: rule 'r1': ...
    """


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
        kind = RULE_SHAPES[self.type]
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
        if kind.meaningless is not None and (meaningless := kind.meaningless(self)) is not None:
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


@dataclass(frozen=True, slots=True)
class RuleShape:
    """What a rule of one type holds: the fields it needs, those it may have, the values
    ``coerce_to`` may take, and why a rule that has all its fields still cannot mean anything."""

    required: frozenset[str]
    optional: frozenset[str] = frozenset()
    targets: frozenset[str] = frozenset()
    meaningless: Callable[[Rule], str | None] | None = None


def _renames_to_itself(rule: Rule) -> str | None:
    return "from and to are the same name" if rule.from_ == rule.to else None


RULE_SHAPES: dict[RuleType, RuleShape] = {
    "param_alias": RuleShape(frozenset({"from", "to"}), meaningless=_renames_to_itself),
    "param_default": RuleShape(frozenset({"from", "value"})),
    "type_coerce": RuleShape(frozenset({"from", "coerce_to"}), targets=frozenset({"bool", "int", "float"})),
    "json_accept_both": RuleShape(
        frozenset({"from"}), optional=frozenset({"coerce_to"}), targets=frozenset({"string", "json"})
    ),
    "nested_alias": RuleShape(frozenset({"in_payload", "array_path", "from", "to"}), meaningless=_renames_to_itself),
    "nested_default": RuleShape(frozenset({"in_payload", "array_path", "from", "value"})),
}
"""What a rule of each type holds, by the type's name (its class in `appliers` applies it)."""
