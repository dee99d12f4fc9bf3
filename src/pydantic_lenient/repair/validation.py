"""The schema compiled for jsonschema-rs as JS hosts read it, and its verdicts on arguments.

Every ``pattern`` and ``patternProperties`` is rewritten so that jsonschema-rs reads it as
ECMA-262 does (`pydantic_lenient.schema.ecma_regex`) and never backtracks without limit; a pattern
that cannot be checked within bounds becomes a stand-in keyword that refuses what it would decide.
The ``content*`` keywords are dropped (hosts treat them as annotations), formats are not asserted,
and nothing is ever fetched. A refusal is told as the validator's messages (`Reason`), or in
pydantic's shape (`CompiledSchema.error_details`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, TypedDict

import jsonschema_rs
from pydantic_core import ErrorDetails

from pydantic_lenient.schema.ecma_regex import PATTERN_OPTIONS, translate
from pydantic_lenient.schema.subschemas import SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS, SCHEMA_MAP_KEYWORDS

from .budget import schema_refusal
from .scopes import ROOT_URI, Draft, _SchemaError, draft_number, refuse_retrieval

__all__ = (
    "UNDECIDABLE_KEYS",
    "CompiledSchema",
    "PreparedSchema",
    "Reason",
    "json_pointer",
    "one_line",
    "prepare_schema",
)

UNDECIDABLE_KEYS = "x-pydantic-lenient-undecidable-pattern-properties"
"""The stand-in for a ``patternProperties`` whose patterns cannot be checked within bounds."""

_UNDECIDABLE_PATTERN = "x-pydantic-lenient-undecidable-pattern"
_VALIDATOR_CLASSES: dict[int, type[jsonschema_rs.Validator]] = {
    jsonschema_rs.Draft202012: jsonschema_rs.Draft202012Validator,
    jsonschema_rs.Draft201909: jsonschema_rs.Draft201909Validator,
    jsonschema_rs.Draft7: jsonschema_rs.Draft7Validator,
    jsonschema_rs.Draft6: jsonschema_rs.Draft6Validator,
    jsonschema_rs.Draft4: jsonschema_rs.Draft4Validator,
}
# Hosts treat these as annotations; jsonschema-rs would assert them in draft-07.
# Arguments with more values than this are described by their first error only (see `CompiledSchema._errors`).
_ALL_ERRORS_LIMIT = 10_000
_ANNOTATIONS_ONLY = frozenset({"contentEncoding", "contentMediaType", "contentSchema"})
# pydantic's error type for a value that is not of a JSON type, so both kinds of refusal form one pattern.
_TYPE_ERRORS = {
    "integer": "int_type",
    "number": "float_type",
    "boolean": "bool_type",
    "string": "string_type",
    "array": "list_type",
    "object": "dict_type",
    "null": "none_required",
}


class Reason(TypedDict):
    """Why arguments are invalid: a validator's message, at a JSON Pointer into the arguments.

    >>> from pydantic_lenient.repair import repair_arguments
    >>> repair_arguments({"properties": {"limit": {"type": "integer"}}}, {"limit": "ten"}).reasons
    ({'path': '/limit', 'message': '"ten" is not of type "integer"'},)
    """

    path: str
    message: str


def json_pointer(parts: Iterable[Any]) -> str:
    """The JSON Pointer of a path of member names and item indexes.

    >>> from pydantic_lenient.repair.validation import json_pointer
    >>> json_pointer(["a/b", 0, "~"])
    '/a~1b/0/~0'
    """
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def one_line(error: Exception) -> str:
    """What a hostile schema made the compiler say, as one line."""
    if isinstance(error, jsonschema_rs.ValidationError):  # the schema fails its meta-schema
        where = json_pointer(error.instance_path)
        message = error.message.split("\n")[0]
        return f"{message} (at {where})" if where else message
    return " ".join(str(error).split()) or type(error).__name__


class _UndecidablePattern:
    """A string where a pattern that cannot be checked within bounds would decide: not accepted."""

    def __init__(self, parent_schema: Any, value: Any, schema_path: Any) -> None:
        self.reason = str(value)

    def validate(self, instance: Any) -> None:
        if isinstance(instance, str):
            raise ValueError(self.reason)


class _UndecidableKeys(_UndecidablePattern):
    """An object whose keys ``patternProperties`` would have to match with such a pattern."""

    def validate(self, instance: Any) -> None:
        if isinstance(instance, dict) and instance:
            raise ValueError(self.reason)


_KEYWORDS: dict[str, Any] = {_UNDECIDABLE_PATTERN: _UndecidablePattern, UNDECIDABLE_KEYS: _UndecidableKeys}


class PreparedSchema(NamedTuple):
    """A schema as jsonschema-rs reads it the way JS hosts do (``document``), the jsonschema-rs number
    of its draft, and each rewritten pattern's original (rewritten -> as the schema wrote it)."""

    document: dict[str, Any] | bool
    draft: int
    originals: dict[str, str]


def prepare_schema(schema: Any, draft: Draft | None) -> PreparedSchema:
    """``schema`` rewritten for jsonschema-rs (see the module docs), read in ``draft`` or the one its
    ``$schema`` names. Raises `ValueError` for what is no schema, is too large for the validator
    (`pydantic_lenient.repair.budget.schema_refusal`), names no known draft, or has a pattern that is not ECMA-262.

    >>> from pydantic_lenient.repair.validation import prepare_schema
    >>> prepare_schema({"pattern": "(?<=a)b", "contentMediaType": "text/plain"}, None)
    PreparedSchema(document={'x-pydantic-lenient-undecidable-pattern':
                             "pattern '(?<=a)b' uses lookbehind, which cannot be checked within bounds"},
                   draft=20, originals={})
    """
    if not isinstance(schema, (Mapping, bool)):
        raise _SchemaError(f"a schema is an object or a boolean, not {type(schema).__name__}")
    refusal = schema_refusal(schema)  # before jsonschema-rs, which a long $ref chain crashes
    if refusal is not None:
        raise _SchemaError(refusal)
    number = draft_number(schema, draft)
    originals: dict[str, str] = {}
    return PreparedSchema(_for_validator(schema, originals), number, originals)


def _for_validator(schema: Any, originals: dict[str, str]) -> Any:
    """``schema`` as jsonschema-rs reads it the way JS hosts do: patterns rewritten, content keywords
    dropped. Raises `ValueError` for a pattern that is not ECMA-262. Records each rewritten
    pattern's original in ``originals``."""
    if isinstance(schema, list):
        return [_for_validator(item, originals) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    result: dict[Any, Any] = {}
    for key, value in schema.items():
        if key in _ANNOTATIONS_ONLY or key in _KEYWORDS:
            continue
        if key == "pattern" and isinstance(value, str):
            translation = translate(value)
            if translation.invalid:
                raise _SchemaError(translation.problem)
            if translation.pattern is None:
                result[_UNDECIDABLE_PATTERN] = translation.problem
            else:
                originals.setdefault(translation.pattern, value)
                result[key] = translation.pattern
        elif key == "patternProperties" and isinstance(value, Mapping):
            patterns: dict[Any, Any] = {}
            for pattern, subschema in value.items():
                if not isinstance(pattern, str):
                    raise _SchemaError(f"a patternProperties key is not a string: {pattern!r}")
                translation = translate(pattern)
                if translation.invalid:
                    raise _SchemaError(translation.problem)
                if translation.pattern is None:
                    result[UNDECIDABLE_KEYS] = translation.problem
                else:
                    originals.setdefault(translation.pattern, pattern)
                    rewritten = _for_validator(subschema, originals)
                    if translation.pattern in patterns:  # two spellings of one pattern: both schemas apply
                        rewritten = {"allOf": [patterns[translation.pattern], rewritten]}
                    patterns[translation.pattern] = rewritten
            result[key] = patterns
        elif key in SCHEMA_MAP_KEYWORDS and isinstance(value, Mapping):
            result[key] = {name: _for_validator(subschema, originals) for name, subschema in value.items()}
        elif key == "dependencies" and isinstance(value, Mapping):  # draft-07: schemas, or lists of names
            result[key] = {name: _for_validator(item, originals) for name, item in value.items()}
        elif key in SCHEMA_KEYWORDS or key in SCHEMA_LIST_KEYWORDS:
            result[key] = _for_validator(value, originals)
        else:
            result[key] = value  # data (enum, const, required, ...) or an unknown keyword: as sent
    return result


class CompiledSchema:
    """A prepared schema compiled by jsonschema-rs, with a retriever that refuses everything; raises
    what the compiler raises for a schema it cannot use.

    >>> from pydantic_lenient.repair.validation import CompiledSchema, prepare_schema
    >>> compiled = CompiledSchema(prepare_schema({"properties": {"id": {"pattern": "^[0-9]+$"}}}, None))
    >>> compiled.validator.is_valid({"id": "12"}), compiled.reasons({"id": "x"}, limit=10)
    (True, ({'path': '/id', 'message': '"x" does not match "^[0-9]+$"'},))
    """

    def __init__(self, prepared: PreparedSchema) -> None:
        self._originals = prepared.originals
        self.validator = _VALIDATOR_CLASSES[prepared.draft](
            prepared.document,
            retriever=refuse_retrieval,
            base_uri=ROOT_URI,
            pattern_options=PATTERN_OPTIONS,
            validate_formats=False,
            keywords=_KEYWORDS,
        )

    def reasons(self, arguments: Any, limit: int) -> tuple[Reason, ...]:
        """Why the validator refuses ``arguments``: at most ``limit`` of its messages, and at least one reason."""
        reasons = []
        try:
            for error in self._errors(arguments, limit):
                reasons.append(Reason(path=json_pointer(error.instance_path), message=self._message(error)))
                if len(reasons) >= limit:
                    break
        except Exception as error:  # the same odd arguments, met only while describing an error
            reasons.append(Reason(path="", message=f"the arguments cannot be validated: {error}"))
        return tuple(reasons) or (Reason(path="", message="the validator refuses the arguments"),)

    def error_details(self, arguments: Any, limit: int) -> list[ErrorDetails]:
        """The validator's errors for ``arguments`` in pydantic's shape, at most ``limit`` of them
        (see `pydantic_lenient.repair.engine.Repairer.error_details`)."""
        details: list[ErrorDetails] = []
        try:
            for error in self._errors(arguments, limit):
                details.extend(_details(error, self._message(error)))
                if len(details) >= limit:
                    break
        except Exception:  # the same odd arguments, met only while describing an error
            return details
        return details[:limit]

    def _errors(self, arguments: Any, limit: int) -> Iterator[jsonschema_rs.ValidationError]:
        """The validator's errors, or only the first for large arguments: jsonschema-rs's ``iter_errors``
        builds every error, each with a copy of its instance, before it yields one (200,000 wrong items
        cost seconds and hundreds of times their size), while ``validate`` stops at the first."""
        if limit > 1 and not _more_values_than(arguments, _ALL_ERRORS_LIMIT):
            yield from self.validator.iter_errors(arguments)
            return
        try:
            self.validator.validate(arguments)
        except jsonschema_rs.ValidationError as error:
            yield error

    def _message(self, error: jsonschema_rs.ValidationError) -> str:
        """The validator's message, naming a pattern as the schema wrote it rather than rewritten."""
        message = error.message
        if isinstance(error.kind, jsonschema_rs.ValidationErrorKind.Pattern):
            rewritten = error.kind.pattern
            original = self._originals.get(rewritten)
            if original is not None and message.endswith(f'"{rewritten}"'):
                return f'{message[: -len(rewritten) - 2]}"{original}"'
        return message


def _more_values_than(value: Any, limit: int) -> bool:
    """Whether ``value`` holds more than ``limit`` values at every depth (stops once it does; no recursion).

    >>> from pydantic_lenient.repair.validation import _more_values_than
    >>> _more_values_than({"a": [1, 2]}, 3), _more_values_than({"a": [1, 2, 3]}, 3)
    (False, True)
    """
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            children: Collection[Any] = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        count += len(children)
        if count > limit:
            return True
        stack.extend(child for child in children if isinstance(child, (Mapping, list, tuple)))
    return False


def _details(error: jsonschema_rs.ValidationError, message: str) -> list[ErrorDetails]:
    """One validator error as pydantic-shaped details (one per name for required and undeclared names)."""
    kind, location = error.kind, tuple(error.instance_path)
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Required) and isinstance(kind.property, str):
        return [ErrorDetails(type="missing", loc=(*location, kind.property), msg=message, input=error.instance)]
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.AdditionalProperties) and isinstance(error.instance, dict):
        return [
            ErrorDetails(type="extra_forbidden", loc=(*location, name), msg=message, input=error.instance.get(name))
            for name in kind.unexpected
            if isinstance(name, str)
        ]
    error_type = kind.name
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Type):
        named = [_TYPE_ERRORS[name] for name in kind.types if name in _TYPE_ERRORS and name != "null"]
        error_type = named[0] if len(named) == 1 else "type"
    elif error_type in _KEYWORDS or error_type == "custom":
        error_type = "pattern"  # a pattern checked by one of the stand-ins
    return [ErrorDetails(type=error_type, loc=location, msg=message, input=error.instance)]
