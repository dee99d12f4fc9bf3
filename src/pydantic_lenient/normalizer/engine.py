"""A declarative request normalizer: rules for wrong names, missing fields and wrong shapes.

Hosts send ``old_str`` where a tool says ``old_text``, leave out ids that nested steps need, send
``"true"`` for a boolean or a raw array where a parameter takes JSON text. Rules are data (JSON or
Python), apply in order, never mutate their input, never lose a value, and record every change.

    normalizer = Normalizer.from_file("rules.json")
    result = normalizer.apply("edit_file", {"old_str": "a", "new_str": "b"})
    result.arguments  # {"old_text": "a", "new_text": "b"}
    result.applied    # [{"rule_id": "edit-old_str", "type": "param_alias", ...}, ...]

The `Rule` record and its load-time checks are in `pydantic_lenient.normalizer.rules`; each rule type is one
class in `pydantic_lenient.normalizer.appliers`; the counting, the stats file's format and its atomic writing
are in `pydantic_lenient.normalizer.stats`.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

from pydantic import BaseModel, model_validator

from pydantic_lenient._files import read_regular_file, write_json_atomically

from ._json import load_json_exactly
from .appliers import Change, ConflictPolicy, NormalizationConflict, RuleApplier, applier_for
from .rules import RULE_TYPES, Rule, RuleError, describe_rule
from .stats import OTHER_TOOLS, CallCounter, StatsFileError, load_stats

__all__ = (
    "BUILTIN_RULES",
    "MAX_RULES_FILE_BYTES",
    "OTHER_TOOLS",
    "RULE_TYPES",
    "NormalizationConflict",
    "NormalizeResult",
    "Normalizer",
    "Rule",
    "RuleError",
    "StatsFileError",
    "rules_from_model",
)

logger = logging.getLogger("pydantic_lenient.normalizer")

BUILTIN_RULES: tuple[Rule, ...] = ()
"""Rules applied before any others. The library ships none: every rule is about someone's tools."""

MAX_RULES_FILE_BYTES = 16 * 1024 * 1024
"""A rules file larger than this is refused before it is parsed."""


class NormalizeResult:
    """What `Normalizer.apply` returns.

    ``arguments``: a new dict, normalized. ``applied``: one ``{rule_id, type, param, from, to}`` dict
    (with a ``note``, and the ``dropped`` value, where there is one) per change, in order, built
    when first read.


    >>> from pydantic_lenient import Normalizer
    >>> normalizer = Normalizer([{"id": "n", "tools": ["*"], "type": "type_coerce", "from": "n", "coerce_to": "int"}])
    >>> result = normalizer.apply("page", {"n": "3"})
    >>> result.arguments
    {'n': 3}
    >>> result.applied
    [{'rule_id': 'n', 'type': 'type_coerce', 'param': 'n', 'from': '3', 'to': 3}]
    """

    __slots__ = ("_applied", "_changes", "arguments")

    arguments: dict[str, Any]
    _changes: Sequence[Change]
    _applied: list[dict[str, Any]] | None

    def __init__(self, arguments: dict[str, Any], applied: Iterable[dict[str, Any]]) -> None:
        self.arguments, self._changes, self._applied = arguments, (), list(applied)

    @property
    def applied(self) -> list[dict[str, Any]]:
        if self._applied is None:
            self._applied = [change.as_dict() for change in self._changes]
        return self._applied

    def __repr__(self) -> str:
        return f"NormalizeResult(arguments={self.arguments!r}, applied={self.applied!r})"


class _ToolPlan:
    """The rules that apply to one tool (their bound ``apply`` methods), and the name its calls are
    counted under."""

    __slots__ = ("counted_as", "steps")

    def __init__(self, appliers: Iterable[RuleApplier], counted_as: str) -> None:
        self.steps = tuple(applier.apply for applier in appliers)
        self.counted_as = counted_as


_M = TypeVar("_M", bound=BaseModel)
_new = object.__new__


class Normalizer:
    """Applies rules, in order (`BUILTIN_RULES`, then ``rules``), to a tool's arguments.

    ``on_conflict="error"`` (the default) refuses an alias whose source and target were both sent
    with different values; ``"keep_target"`` keeps the target and records what it dropped.
    ``stats_file``, when given, restores the counts saved there and is where `save` writes.

    Calls are counted per tool for the tools a rule names and the tools registered with
    `register_tools` (an adapter registers its server's tools); every other name is counted under
    `OTHER_TOOLS`, so invented tool names cannot grow memory or the stats file.


    >>> from pydantic_lenient import Normalizer
    >>> normalizer = Normalizer.from_json('''[
    ...     {"id": "old", "tools": ["edit_file"], "type": "param_alias", "from": "old_str", "to": "old_text"},
    ...     {"id": "force", "tools": ["*"], "type": "type_coerce", "from": "force", "coerce_to": "bool"}
    ... ]''')
    >>> normalizer.apply("edit_file", {"old_str": "a", "force": "false"}).arguments
    {'force': False, 'old_text': 'a'}
    >>> normalizer.apply("edit_file", {"force": "no"}).arguments  # only true/false/1/0: left for the model to refuse
    {'force': 'no'}
    >>> normalizer.stats()["by_tool"]
    {'edit_file': {'processed': 2, 'normalized': 1}}
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
        loaded = [*builtin]
        for position, rule in enumerate(rules):
            loaded.append(rule if isinstance(rule, Rule) else Rule.from_dict(rule, position=position))
        seen: set[str] = set()
        for rule in loaded:
            if rule.id in seen:
                raise RuleError(f"{describe_rule(rule.id)}: duplicate id")
            seen.add(rule.id)
        self.rules: tuple[Rule, ...] = tuple(loaded)
        self.on_conflict: ConflictPolicy = on_conflict
        self.stats_file = Path(stats_file) if stats_file is not None else None
        self._appliers = [(rule, applier_for(rule, on_conflict)) for rule in loaded]
        self._counter = CallCounter(self.recent_limit)
        # Replaced, never changed in place, so `apply` can read it without the lock.
        self._counted_tools = frozenset(tool for rule in loaded for tool in rule.tools) - {"*"}
        self._other_tools = _ToolPlan([applier for rule, applier in self._appliers if "*" in rule.tools], OTHER_TOOLS)
        self._plans: dict[str, _ToolPlan] = {}
        self._lock = threading.Lock()
        self._autosave: tuple[threading.Thread, threading.Event] | None = None
        if self.stats_file is not None:
            self._counter.home = Path(os.path.abspath(self.stats_file))  # where its counts live, saved or not
            if self.stats_file.exists():
                self.restore_stats(self.stats_file)

    # ---- loading

    @classmethod
    def from_json(cls, text: str | bytes, **options: Any) -> Normalizer:
        """Rules from JSON text: a list of rules, or ``{"rules": [...]}``."""
        return cls(_rules_document(text), **options)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **options: Any) -> Normalizer:
        """Rules from a JSON file; any problem with it is a `RuleError` naming the file (and the rule)."""
        try:
            data = read_regular_file(path, MAX_RULES_FILE_BYTES, follow_symlinks=True)
        except OSError as error:
            raise RuleError(f"cannot read rules from {path}: {error.strerror or error}") from None
        except ValueError as error:  # a FIFO, a device, a directory, or too large: not read
            raise RuleError(f"cannot read rules from {path}: {error}") from None
        try:
            return cls(_rules_document(data), **options)
        except RuleError as error:
            raise RuleError(f"{path}: {error}") from None

    # ---- tools

    def register_tools(self, names: Iterable[str]) -> None:
        """Count calls to these tools under their own names (the tools a server has)."""
        added = frozenset(names)
        if not all(type(name) is str for name in added):
            raise TypeError("tool names must be strings")
        if added <= self._counted_tools:
            return  # adapters register a tool on every call to it
        with self._lock:
            self._counted_tools |= added

    def _plan_for(self, tool: str) -> _ToolPlan:
        if tool not in self._counted_tools:
            return self._other_tools  # shared, so unknown names keep no state
        with self._lock:
            plan = self._plans.get(tool)
            if plan is None:
                appliers = [applier for rule, applier in self._appliers if rule.applies_to(tool)]
                plan = self._plans[tool] = _ToolPlan(appliers, tool)
            return plan

    # ---- normalizing

    def apply(self, tool: str, arguments: Mapping[str, Any]) -> NormalizeResult:
        """Normalize ``arguments`` for ``tool``. The input is never mutated.

        Raises `NormalizationConflict` when an alias's source and target were both sent with
        different values (under ``on_conflict="error"``).
        """
        plan = self._plans.get(tool)
        if plan is None:
            plan = self._plan_for(tool)
        arguments = dict(arguments)
        changes: list[Change] = []
        counter = self._counter
        try:
            for step in plan.steps:
                found = step(arguments)
                if found:
                    changes += found
        except NormalizationConflict:
            counter.add(plan.counted_as, ())  # processed, and not normalized
            raise
        counter.add(plan.counted_as, changes)
        if changes and logger.isEnabledFor(logging.INFO):
            _log_normalized(tool, changes)
        # A result whose `applied` is built from `changes` when first read (`__init__` takes dicts).
        result: NormalizeResult = _new(NormalizeResult)
        result.arguments, result._changes, result._applied = arguments, changes, None
        return result

    # ---- models

    def attach(self, tool: str) -> Callable[[type[_M]], type[_M]]:
        """Class decorator: the model normalizes its raw input for ``tool`` before validating it.

        ``@normalizer.attach("edit_file")`` on a model returns a subclass with a before-validator,
        so ``Model.model_validate(raw)`` normalizes, then validates. ``tool`` is registered.
        """
        self.register_tools([tool])

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
        return cast("dict[str, Any]", self._counter.snapshot())

    def restore_stats(self, path: str | os.PathLike[str]) -> None:
        """Replace the counts with those saved in ``path`` by `save`, so they carry across restarts.

        Raises `StatsFileError`, naming the file, when it cannot be read or is not a stats file.
        """
        self._counter.restore(load_stats(path), Path(os.path.abspath(path)))

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Save the stats atomically (a temporary file beside the target, then a rename).

        The counts' home (the file they were restored from or last saved to, or any file if
        neither) gets the calls counted since the last save added to what it holds now, under a
        lock, so several processes can share one stats file and lose no count. Any other file
        gets a copy of the counts. Raises `StatsFileError` if the home holds something other than
        stats: nothing is written over it, and the next save adds these calls too.
        """
        target = Path(path) if path is not None else self.stats_file
        if target is None:
            raise ValueError("no path given, and the normalizer has no stats_file")
        home = Path(os.path.abspath(target))
        if self._counter.home in (None, home):
            self._counter.save(home)
            return target
        return write_json_atomically(target, self._counter.snapshot())

    def autosave(self, every: float, path: str | os.PathLike[str] | None = None) -> None:
        """Save the stats every ``every`` seconds on a daemon thread, until `close`.

        A save that fails is logged (a warning on ``pydantic_lenient.normalizer.engine``) and tried again
        at the next tick; counting goes on regardless.
        """
        if not every > 0:
            raise ValueError("every must be a positive number of seconds")
        if path is not None:
            self.stats_file = Path(path)
        if self.stats_file is None:
            raise ValueError("no path given, and the normalizer has no stats_file")
        self.close(save=False)
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(every):
                try:
                    self.save()
                except Exception:  # noqa: PERF203  # a full disk, a removed directory: try again next time
                    logger.warning("could not save normalizer stats to %s; retrying", self.stats_file, exc_info=True)

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


def _log_normalized(tool: str, changes: Sequence[Change]) -> None:
    rule_ids = [change.rule_id for change in changes]
    applied = [change.as_dict() for change in changes]
    logger.info(
        "normalized %s arguments: %s",
        tool,
        ", ".join(rule_ids),
        extra={"tool": tool, "rule_ids": rule_ids, "applied": applied},
    )


def _rules_document(text: str | bytes) -> list[Any]:
    """The list of rules in a rules document: JSON text of a list, or of ``{"rules": [...]}``."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8-sig")
        data = load_json_exactly(text)
    except UnicodeDecodeError as error:
        raise RuleError(f"rules are not UTF-8 text (byte {error.start})") from None
    except RecursionError:
        raise RuleError("rules are nested too deeply to read") from None
    except ValueError as error:  # bad JSON, a repeated key, NaN, an integer too long to read
        raise RuleError(f"rules are not valid JSON: {error}") from None
    if isinstance(data, dict) and set(data) == {"rules"}:
        data = data["rules"]
    if not isinstance(data, list):
        raise RuleError("rules must be a JSON list of rules, or an object with a 'rules' list")
    return data


def rules_from_model(model: type[BaseModel], tool: str) -> list[Rule]:
    """Rules a model implies for ``tool``.

    * A field whose ``validation_alias`` is an ``AliasChoices`` gets a ``param_alias`` rule from each
      other name to the first one, so the model can advertise one name and still take the others.
    * A plain scalar field that is not lenient gets the ``type_coerce`` rule its lenient marker names
      (``bool``, ``int``, ``float``; none for ``Decimal``, whose exact value no JSON number holds).


    >>> from pydantic import AliasChoices, BaseModel, Field
    >>> from pydantic_lenient import rules_from_model
    >>> class EditFile(BaseModel):
    ...     old_text: str = Field(validation_alias=AliasChoices("old_text", "old_str"))
    ...     force: bool = False
    >>> [(rule.type, rule.from_, rule.to or rule.coerce_to) for rule in rules_from_model(EditFile, "edit_file")]
    [('param_alias', 'old_str', 'old_text'), ('type_coerce', 'force', 'bool')]
    """
    from pydantic import AliasChoices

    from pydantic_lenient.types.annotations import is_lenient, lenient_scalar_class, split_annotated

    rules: list[Rule] = []
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            names = list(dict.fromkeys(choice for choice in alias.choices if isinstance(choice, str)))
            rules.extend(
                Rule(f"{tool}.{name}.alias.{other}", (tool,), "param_alias", from_=other, to=names[0])
                for other in names[1:]
            )
        base, metadata = split_annotated(info.annotation)
        metadata = tuple(info.metadata) + metadata
        if is_lenient(metadata):
            continue
        marker_class = lenient_scalar_class(base)
        coerce_to = None if marker_class is None else marker_class.coerce_to
        if coerce_to is not None:
            key = info.alias or name
            rules.append(Rule(f"{tool}.{name}.coerce", (tool,), "type_coerce", from_=key, coerce_to=coerce_to))
    return rules
