"""Schema-driven argument repair for any tool schema: the client and proxy side.

A client, an agent framework or a proxy sees only a tool's advertised ``inputSchema``, from a
server it may not trust. Before it sends a model's arguments, `repair_arguments` fixes what the
schema can tell apart: a string where the location takes a boolean, a number, an array or an
object, a number or boolean where it takes a string (``string_to_boolean``, ``string_to_number``,
``json_text_to_structure``, ``scalar_to_string``: the table is in
`pydantic_lenient.repair.coercions`), and a key in another case convention than the declared name
(``renamed_key``: `pydantic_lenient.repair.walk`).

Arguments that validate come back unchanged (as a copy) without a walk: a real validator decides
first. Repair never adds or removes a value and never fills in defaults.

`Repairer` puts together one module per job:

- `pydantic_lenient.repair.validation`: the schema compiled for jsonschema-rs (patterns read as
  ECMA-262 does, nothing ever fetched), and its verdicts, reasons and pydantic-shaped errors;
- `pydantic_lenient.repair.scopes`: where each subschema sits (base URI, draft), and what a ``$ref`` names;
- `pydantic_lenient.repair.reader`: which types and members a location admits, read per draft as
  the validator reads them (`SchemaReader`);
- `pydantic_lenient.repair.budget`: the limits on nesting, fan-out and work, and the cost checks;
- `pydantic_lenient.repair.coercions` and `pydantic_lenient.repair.walk`: changing values, and
  walking the arguments beside the schema.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic_core import ErrorDetails

from pydantic_lenient.schema.locations import Allowance, Node

from .budget import ValidationCost
from .reader import NodeReader
from .scopes import DRAFTS, Draft, Locator
from .validation import CompiledSchema, Reason, one_line, prepare_schema
from .walk import Walk, copy_containers

__all__ = ("RepairResult", "Repairer", "repair_arguments")

logger = logging.getLogger("pydantic_lenient.repair")


class RepairResult(NamedTuple):
    """``arguments``: a new object (the input is never mutated; with ``repair(copy=False)`` it shares
    what repair did not change); ``repairs``: one ``{path, from, to, kind}`` per change, ``path`` a
    JSON Pointer; ``valid``: whether the result validates against the schema, as a real validator
    decides; ``reasons``: when it does not, why (at most ``max_reasons`` of the validator's messages).


    >>> from pydantic_lenient.repair.engine import repair_arguments
    >>> repair_arguments({"properties": {"uids": {"type": "array"}}}, {"uids": "[17, 18]"})
    RepairResult(arguments={'uids': [17, 18]},
                 repairs=[{'path': '/uids', 'from': '[17, 18]', 'to': [17, 18], 'kind': 'json_text_to_structure'}],
                 valid=True, reasons=())
    """

    arguments: Any
    repairs: list[dict[str, Any]]
    valid: bool
    reasons: tuple[Reason, ...] = ()


class Repairer:
    """Repairs arguments against one schema; build it once per schema and reuse it.

    ``draft`` is the dialect the schema is read in; by default the one its ``$schema`` names, else
    2020-12 (MCP's default). A schema the validator cannot compile (malformed keywords, a pattern
    that is not ECMA-262, a ``$ref`` outside the schema) is kept in ``schema_error``, and every
    result is then ``valid=False`` with it as the reason.

    ``max_depth`` bounds how deep into the arguments repair goes, ``max_text_length`` how long a
    string it will parse as JSON, ``budget`` how many schema nodes and values one repair may visit,
    and ``max_reasons`` how many of the validator's messages a result carries.


    >>> from pydantic_lenient.repair.engine import Repairer
    >>> repairer = Repairer({"type": "object", "properties": {"dry_run": {"type": "boolean"}}})
    >>> repairer.repair({"dry_run": "FALSE"}).arguments
    {'dry_run': False}
    >>> repairer.repair({"dry_run": "no"})  # not a boolean's spelling: left as sent, and still invalid
    RepairResult(arguments={'dry_run': 'no'}, repairs=[], valid=False,
                 reasons=({'path': '/dry_run', 'message': '"no" is not of type "boolean"'},))
    >>> repairer.is_valid({"dry_run": True})
    True
    """

    def __init__(
        self,
        schema: Mapping[str, Any] | bool,
        *,
        draft: Draft | None = None,
        max_depth: int = 64,
        max_text_length: int = 1_000_000,
        budget: int = 100_000,
        max_reasons: int = 10,
    ) -> None:
        self.schema = schema
        self.max_depth = max_depth
        self.max_text_length = max_text_length
        self.budget = budget
        self.max_reasons = max_reasons
        self.schema_error: str | None = None
        self._compiled: CompiledSchema | None = None
        self._cost: ValidationCost | None = None
        self._reader = NodeReader(Locator(True, DRAFTS["2020-12"]), Allowance(budget))  # until the schema compiles
        self._walking = threading.RLock()  # the budget and the caches are shared by every call
        try:
            self._compile(schema, draft)
        except Exception as error:  # whatever a hostile schema makes the compiler say: one line
            self.schema_error = one_line(error)
            self._compiled = None

    def _compile(self, schema: Any, draft: Draft | None) -> None:
        prepared = prepare_schema(schema, draft)
        compiled = CompiledSchema(prepared)
        # The walk reads the very document the validator compiled, through the same kind of registry.
        locator = Locator(prepared.document, prepared.draft)
        self._reader = NodeReader(locator, Allowance(self.budget))
        self._cost = ValidationCost(locator)
        self._compiled = compiled

    def accepted(self, node: Node, depth: int = 0) -> frozenset[str]:
        """The JSON types a value at this node may have (an over-approximation: never too few), with
        `pydantic_lenient.schema.locations.NULL_STRING` where the string ``"null"`` itself may be."""
        return self._reader.accepted(node, depth)

    def verdict(self, arguments: Any, *, shallow: bool = False) -> tuple[bool, tuple[Reason, ...]]:
        """Whether ``arguments`` validate, and if not, why; False wherever the validator cannot decide
        (a schema it cannot compile, arguments nested too deep or holding what JSON cannot).
        ``shallow``: the caller knows ``arguments`` nest no deeper than 256 levels (pydantic-core's
        `from_json` refuses more than 200), so they are not walked to check it: one validation."""
        problem = self._problem(arguments, shallow)
        if problem is None:
            return True, ()
        return False, problem or self._reasons(arguments)

    def _problem(self, arguments: Any, shallow: bool = False) -> tuple[Reason, ...] | None:
        """None when ``arguments`` validate; else why not, or ``()`` when the validator's messages say why."""
        if self._compiled is None or self._cost is None:
            return (Reason(path="", message=f"the schema cannot be used: {self.schema_error}"),)
        with self._walking:
            too_costly = self._cost.too_costly(arguments, shallow=shallow)
        if too_costly is not None:
            return (Reason(path="", message=too_costly),)
        try:
            return None if self._compiled.validator.is_valid(arguments) else ()
        except Exception as error:  # a lone surrogate, a key that is no string, a value that is not JSON
            return (Reason(path="", message=f"the arguments cannot be validated: {error}"),)

    def _reasons(self, arguments: Any) -> tuple[Reason, ...]:
        if self._compiled is None:
            return (Reason(path="", message="the validator refuses the arguments"),)
        return self._compiled.reasons(arguments, self.max_reasons)

    def error_details(self, arguments: Any) -> list[ErrorDetails]:
        """The validator's errors for ``arguments`` in pydantic's shape (``type``, ``loc``, ``msg``,
        ``input``), so that `pydantic_lenient.observe.failures.field_failures` records them as it records a
        pydantic refusal: a ``type`` error is named as pydantic names it (``int_type``,
        ``bool_type``...), a required property is ``missing`` at its name, each undeclared one
        ``extra_forbidden``, and any other keyword is its own name (``minimum``, ``enum``).
        Empty when the arguments validate, or when the validator cannot say why (the schema cannot be
        used, the arguments cost too much or hold what JSON cannot); at most ``max_reasons``, and
        only the first for arguments holding more than 10,000 values.

        >>> from pydantic_lenient.repair.engine import Repairer
        >>> schema = {"properties": {"limit": {"type": "integer"}}, "required": ["query"]}
        >>> [(e["type"], e["loc"]) for e in Repairer(schema).error_details({"limit": "many"})]
        [('missing', ('query',)), ('int_type', ('limit',))]
        """
        if self._compiled is None or self._problem(arguments) != ():
            return []
        return self._compiled.error_details(arguments, self.max_reasons)

    def is_valid(self, arguments: Any, *, shallow: bool = False) -> bool:
        """Whether ``arguments`` validate (False where the validator cannot decide): `verdict` without
        the reasons, so one validation and nothing more (``shallow`` as there)."""
        return self._problem(arguments, shallow) is None

    def repair(self, arguments: Any, *, copy: bool = True) -> RepairResult:
        """Repair ``arguments`` (see the module docs). Never raises.

        ``copy=False``: the result shares with ``arguments`` whatever repair did not change (it is
        ``arguments`` itself when nothing changed), for a caller that only reads it or writes it
        out: a huge call that validates, or that repair cannot change, is then not copied."""
        problem = self._problem(arguments)
        if problem is None:
            return RepairResult(self._unchanged(arguments, copy), [], True)
        if self._compiled is None:  # a schema that cannot be used decides nothing, repairs included
            return RepairResult(self._unchanged(arguments, copy), [], False, problem)
        repairs: list[dict[str, Any]] = []
        with self._walking:
            walk = Walk(
                self._reader,
                budget=self.budget,
                max_depth=self.max_depth,
                max_text_length=self.max_text_length,
                copy=copy,
            )
            try:
                repaired = walk.repaired(arguments, repairs)
            except Exception:  # over budget, or something odd in the arguments: change nothing
                repaired, repairs = self._unchanged(arguments, copy), []
        if not repairs:
            return RepairResult(repaired if copy else arguments, repairs, False, problem or self._reasons(arguments))
        logger.info(
            "repaired %d argument(s): %s",
            len(repairs),
            ", ".join(repair["path"] for repair in repairs),
            extra={"repairs": repairs},
        )
        return RepairResult(repaired, repairs, *self.verdict(repaired))

    def _unchanged(self, arguments: Any, copy: bool) -> Any:
        """``arguments`` as a result that changed nothing: a copy, or themselves."""
        return copy_containers(arguments, self.max_depth) if copy else arguments


def repair_arguments(schema: Mapping[str, Any] | bool, arguments: Any, *, draft: Draft | None = None) -> RepairResult:
    """Repair ``arguments`` against ``schema``; see the module docs for what changes, and when.

    Builds a `Repairer` each time; keep one per schema to repair many calls.


    >>> from pydantic_lenient.repair.engine import repair_arguments
    >>> schema = {"type": "object", "properties": {"limit": {"type": "integer"}, "query": {"type": "string"}}}
    >>> repair_arguments(schema, {"limit": "10", "query": 42}).arguments
    {'limit': 10, 'query': '42'}
    >>> repair_arguments(schema, {"limit": "5.5"})  # an integer location takes integral values only
    RepairResult(arguments={'limit': '5.5'}, repairs=[], valid=False,
                 reasons=({'path': '/limit', 'message': '"5.5" is not of type "integer"'},))
    """
    return Repairer(schema, draft=draft).repair(arguments)
