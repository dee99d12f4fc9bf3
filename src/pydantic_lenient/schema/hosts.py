"""A JSON Schema validator that reads ``pattern`` (ECMA-262) and ``nullable`` as JS hosts do, from ``jsonschema``.

``jsonschema`` and ``regress`` are optional dependencies (the ``testing`` extra), so
this module is imported only by the features that need them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any, Literal

try:
    import jsonschema
    import regress
    from jsonschema.protocols import Validator
    from referencing.exceptions import Unresolvable
except ImportError as error:  # pragma: no cover - exercised only without the extras
    raise ImportError(
        "this feature needs jsonschema and regress: pip install 'pydantic-lenient[testing]'"
        " (in a clone: pip install -e '.[testing]')"
    ) from error

__all__ = ("Draft", "Unresolvable", "Validator", "draft_of", "ecma_regex", "host_validator")

Draft = Literal["2020-12", "07"]
"""The JSON Schema dialects a host validator can read: 2020-12 (MCP's default) and draft-07.

>>> from pydantic_lenient.testing import host_validator
>>> host_validator({"prefixItems": [{"type": "integer"}]}, draft="07").is_valid(["x"])  # draft-07 ignores it
True
"""


@functools.lru_cache(maxsize=512)
def ecma_regex(pattern: str) -> regress.Regex:
    # Ajv compiles patterns with the "u" flag; do the same.
    return regress.Regex(pattern, "u")


def _ecma_pattern(
    validator: Validator, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if validator.is_type(instance, "string") and ecma_regex(pattern).find(instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _ecma_pattern_properties(
    validator: Validator, properties: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            if ecma_regex(pattern).find(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)  # type: ignore[attr-defined]


_JSON_SCHEMA_TYPE = jsonschema.Draft202012Validator.VALIDATORS["type"]


def _ajv_type(
    validator: Validator, types: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    """``type`` as Ajv 8 reads it: ``nullable: true`` beside it admits null too (OpenAPI's keyword,
    which the portable style writes for a nullable array item, as the Gemini API reads it)."""
    if instance is None and schema.get("nullable") is True:
        return
    yield from _JSON_SCHEMA_TYPE(validator, types, instance, schema)


# JSON Schema patterns are ECMA-262 regular expressions. jsonschema evaluates them with Python's
# `re`, where `$` also matches before a final newline: "100\n" would pass "^[0-9]+$" there, and
# fails in every JS host. These validators use an ECMA engine instead, and read ``nullable`` as Ajv.
_HOST_KEYWORDS = {"pattern": _ecma_pattern, "patternProperties": _ecma_pattern_properties, "type": _ajv_type}
_VALIDATORS: dict[Draft, Any] = {
    "2020-12": jsonschema.validators.extend(jsonschema.Draft202012Validator, _HOST_KEYWORDS),  # type: ignore[no-untyped-call]
    "07": jsonschema.validators.extend(jsonschema.Draft7Validator, _HOST_KEYWORDS),  # type: ignore[no-untyped-call]
}


def draft_of(schema: Mapping[str, Any]) -> Draft:
    """The draft a schema declares with ``$schema`` (draft-07 or 2020-12); 2020-12 when it says none."""
    declared = schema.get("$schema", "") if isinstance(schema, Mapping) else ""
    return "07" if isinstance(declared, str) and "draft-07" in declared else "2020-12"


def host_validator(schema: Mapping[str, Any] | bool, *, draft: Draft | None = None, check: bool = True) -> Validator:
    """A ``jsonschema`` validator for ``schema`` that reads patterns as JS hosts do (ECMA-262).

    With ``check`` (the default) the schema is checked first, so an invalid schema fails here
    rather than validating nothing.

    >>> from pydantic_lenient.testing import host_validator
    >>> validator = host_validator({"type": "string", "pattern": "^[0-9]+$"})
    >>> validator.is_valid("100"), validator.is_valid("100\\n")  # Python's re alone would take "100\\n"
    (True, False)
    >>> host_validator({"type": "boolean", "nullable": True}).is_valid(None)  # as Ajv reads OpenAPI's nullable
    True
    >>> host_validator({"type": "text"})
    Traceback (most recent call last):
      ...
    jsonschema.exceptions.SchemaError: 'text' is not valid under any of the given schemas
    ...
    """
    validator_class = _VALIDATORS[draft or (draft_of(schema) if isinstance(schema, Mapping) else "2020-12")]
    if check:
        validator_class.check_schema(schema)
    validator: Validator = validator_class(schema)
    return validator
