"""The shapes an input schema can be advertised in, and the one stage that produces them.

Every style is a rewrite of a finished JSON schema, at one stage, `apply_style`:

* ``"type-array"``: ``{"type": ["integer", "string", "null"], "minimum": 0, "pattern": "^[0-9]+$"}``.
  Compact; Ajv compiles it with ``allowUnionTypes`` or outside strict mode.
* ``"any-of"``: one ``anyOf`` branch per type. Compiles under strict Ajv and fits providers that
  refuse type arrays. The first two styles admit exactly the same JSON values.
* ``"strict"``: canonical types only (``{"type": "integer"}``), while the validator stays lenient.
  For hosts that repair arguments against the schema themselves: a widened schema switches that off.
* ``"portable"``: the ``any-of`` style adapted so that every profiled MCP host lists it and reads
  it right (`pydantic_lenient.schema.portable`). It may admit more than the server takes (``1.5``
  for an integer, a non-member inside an integer enum's range): the server refuses those clearly.

The lenient types always render the same widened shape, whatever generator writes their schema
(pydantic's own, FastMCP's, pydantic-ai's): an ``anyOf`` whose *first* branch is the canonical
schema and whose second is the alternative form (`pydantic_lenient.types.scalar.render_scalar`). The
stage reads that shape back, so it can restyle a schema it did not generate (FastMCP's
``tools/list``, a committed catalog) exactly as it restyles one it did:

* from a model, `apply_style` (and `pydantic_lenient.schema.targets.input_schema`) take pydantic's
  schema of it and rewrite that;
* from a finished schema, the same rewrite, applied to every subschema, children first. The
  ``strict`` rewrite first writes type arrays as ``anyOf``, then drops the alternative branches the
  lenient types add: a ``{"type": "string", "pattern": P}`` branch, for one of the library's own
  patterns P, after a branch of P's canonical type; and a JSON-text branch
  (``"contentMediaType": "application/json"``) after the branches its ``contentSchema`` lists
  (``LenientJson``), or else the branches after it that its ``contentSchema`` lists (``JsonText``,
  whose canonical form is the text).

A property marked ``x-mcp-header`` (mirrored into an HTTP header at MCP 2026-07-28) is written in
the ``strict`` shape in every style: the spec allows the mark only on a single-type property
(`pydantic_lenient.schema.mcp_headers`); its validator stays lenient.

Rewriting the ``type-array`` output to ``any-of`` or ``strict`` gives what the model gives directly.
Every style also drops pydantic's OpenAPI ``discriminator`` keyword. An unknown style, or a source
that is neither a model nor a schema, raises; nothing is ever returned unstyled. Later stages
(provider targets) start from this stage's output.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic_lenient.types.bounds import BOUND_KEYWORDS, PYDANTIC_BOUND_KEYWORDS, integer_range
from pydantic_lenient.types.forms import (
    SCALAR_STRING_FORMS,
    advertised_digit_patterns,
    members_digit_pattern,
    narrowed_digit_pattern,
    pattern_with_null,
    pattern_without_null,
)
from pydantic_lenient.types.portable_rules import Rendering, rendering

from .mcp_headers import with_header_properties
from .portable import portable_shape
from .subschemas import Schema, transform_bottom_up

# pydantic loads only for a model: the proxy restyles JSON schemas before it needs pydantic.
if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ("DEFAULT_STYLE", "STYLES", "Style", "apply_style")

Style = Literal["portable", "type-array", "any-of", "strict"]
"""How an ``inputSchema`` writes a lenient field: see `input_schema` for each style's shape.

>>> from pydantic import TypeAdapter
>>> from pydantic_lenient import Style
>>> TypeAdapter(Style).validate_python("any-of")
'any-of'
"""

STYLES: tuple[Style, ...] = get_args(Style)
"""Every `Style`, the default first.

>>> from pydantic_lenient import STYLES
>>> STYLES
('portable', 'type-array', 'any-of', 'strict')
"""

DEFAULT_STYLE: Style = STYLES[0]
"""The style every way in writes when none is given: ``"portable"``, the one every profiled host
lists and reads right (docs/hosts.md)."""

# Keywords that constrain only instances of one JSON type. A type union may be written as a type
# array exactly when each branch uses only its own type's keywords: the others ignore them.
_KEYWORDS_BY_FAMILY: dict[str, frozenset[str]] = {
    "number": BOUND_KEYWORDS,
    "string": frozenset(
        {
            "pattern",
            "minLength",
            "maxLength",
            "format",
            "contentMediaType",
            "contentEncoding",
            "contentSchema",
        }
    ),
    "array": frozenset(
        {
            "items",
            "prefixItems",
            "additionalItems",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "unevaluatedItems",
        }
    ),
    "object": frozenset(
        {
            "properties",
            "patternProperties",
            "additionalProperties",
            "required",
            "propertyNames",
            "minProperties",
            "maxProperties",
            "dependentRequired",
            "dependentSchemas",
            "unevaluatedProperties",
        }
    ),
    "boolean": frozenset(),
    "null": frozenset(),
}
_FAMILY_OF_TYPE = {
    "integer": "number",
    "number": "number",
    "string": "string",
    "array": "array",
    "object": "object",
    "boolean": "boolean",
    "null": "null",
}
_TYPE_SPECIFIC_KEYWORDS = frozenset().union(*_KEYWORDS_BY_FAMILY.values())


def _flatten_nested_any_of(schema: Schema) -> Schema:
    """``anyOf: [{anyOf: [a, b]}, c]`` is ``anyOf: [a, b, c]`` when the inner node says nothing else."""
    members = schema.get("anyOf") if isinstance(schema, dict) else None
    if not isinstance(members, list):
        return schema
    flat: list[Any] = []
    for member in members:
        if isinstance(member, dict) and set(member) == {"anyOf"} and isinstance(member["anyOf"], list):
            flat.extend(member["anyOf"])
        else:
            flat.append(member)
    return {**schema, "anyOf": flat}


def _members_as_any_of(schema: Schema) -> Schema:
    """Write the ``anyOf`` members that are type arrays as ``anyOf`` again, so that they can merge
    with their siblings: the result does not depend on how far the children were merged already."""
    members = schema.get("anyOf") if isinstance(schema, dict) else None
    if not isinstance(members, list):
        return schema
    return {**schema, "anyOf": [_type_array_to_any_of(member) for member in members]}


def _any_of_to_type_array(schema: Schema) -> Schema:
    """Write an ``anyOf`` of single-type branches as one type array, where that means the same."""
    members = schema.get("anyOf") if isinstance(schema, dict) else None
    if not isinstance(members, list) or len(members) < 2:
        return schema
    if "type" in schema or not _TYPE_SPECIFIC_KEYWORDS.isdisjoint(schema):
        return schema
    types: list[str] = []
    keywords: dict[str, Any] = {}
    families: set[str] = set()
    for member in members:
        type_name = member.get("type") if isinstance(member, dict) else None
        if not isinstance(type_name, str) or type_name not in _FAMILY_OF_TYPE:
            return schema
        family = _FAMILY_OF_TYPE[type_name]
        if family in families or not set(member) - {"type"} <= _KEYWORDS_BY_FAMILY[family]:
            return schema
        families.add(family)
        types.append(type_name)
        keywords.update((key, value) for key, value in member.items() if key != "type")
    rest = {key: value for key, value in schema.items() if key != "anyOf"}
    return {"type": types, **keywords, **rest}


def _type_array_to_any_of(schema: Schema) -> Schema:
    """Write a type array as an ``anyOf`` of single-type branches (strict Ajv refuses type arrays)."""
    types = schema.get("type") if isinstance(schema, dict) else None
    if not isinstance(types, list) or "anyOf" in schema:
        return schema
    if len(types) == 1:
        return {**schema, "type": types[0]}
    if not all(isinstance(name, str) and name in _FAMILY_OF_TYPE for name in types):
        return schema
    branches = []
    for name in types:
        own = _KEYWORDS_BY_FAMILY[_FAMILY_OF_TYPE[name]]
        branches.append({"type": name, **{key: value for key, value in schema.items() if key in own}})
    rest = {key: value for key, value in schema.items() if key != "type" and key not in _TYPE_SPECIFIC_KEYWORDS}
    return {"anyOf": branches, **rest}


# The string forms the lenient scalars add, by pattern, with the canonical type they stand for;
# also each widened to take "null" (a nullable field made lenient by the mapping).
_STRING_FORM_TYPES: dict[str, str] = dict(SCALAR_STRING_FORMS)
_STRING_FORM_TYPES.update({pattern_with_null(pattern): kind for pattern, kind in _STRING_FORM_TYPES.items()})
_JSON_TEXT_MEDIA_TYPE = "application/json"


def _is_scalar_string_form(branch: Schema, before: list[Schema]) -> bool:
    """``{"type": "string", "pattern": P}`` for a lenient scalar's P, after a branch of P's type
    (for an integer, P may be narrowed to that branch's bounds)."""
    if not isinstance(branch, dict) or set(branch) != {"type", "pattern"} or branch["type"] != "string":
        return False
    pattern = branch["pattern"]
    if not isinstance(pattern, str):
        return False
    canonical = _STRING_FORM_TYPES.get(pattern)
    if canonical is not None:
        return any(isinstance(b, dict) and b.get("type") == canonical for b in before)
    return any(
        isinstance(b, dict)
        and b.get("type") == "integer"
        and (pattern in _narrowed_forms(b.get("minimum"), b.get("maximum")) or pattern in _members_forms(b.get("enum")))
        for b in before
    )


def _members_forms(members: Any) -> set[str]:
    """The digit patterns of an integer enum's members (`DigitText`), also taking "null"."""
    if not (isinstance(members, list) and members and all(_is_integer(member) for member in members)):
        return set()
    pattern = members_digit_pattern(members)
    return {pattern, pattern_with_null(pattern)}


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _narrowed_forms(lower: Any, upper: Any) -> set[str]:
    if not all(bound is None or (isinstance(bound, int) and not isinstance(bound, bool)) for bound in (lower, upper)):
        return set()
    patterns = advertised_digit_patterns(lower, upper)
    return {*patterns, *map(pattern_with_null, patterns)}


# pydantic writes its own names (`PYDANTIC_BOUND_KEYWORDS`) for constraints it checks after a lenient
# marker beside the marker's anyOf when they reach it through an Optional (README: hand-written types).
_LENGTH_KEYWORDS = frozenset({"minItems", "maxItems", "minProperties", "maxProperties"})


def _standard_keywords(schema: Schema) -> Schema:
    """A lenient type's ``anyOf`` with constraints pydantic applied outside it, rewritten so each
    reaches the branches it constrains as standard JSON Schema: bounds (written with pydantic's
    names) on the number branch and, narrowed, the digit pattern; array and object lengths on the
    structure and inside the JSON text's ``contentSchema``."""
    members = schema.get("anyOf") if isinstance(schema, dict) else None
    if not isinstance(members, list) or len(members) != 2 or not all(isinstance(m, dict) for m in members):
        return schema
    canonical, alternative = members
    # A bound written as text (pydantic writes a Decimal so) is no JSON Schema number: left as it is.
    lifted = {key for key, value in schema.items() if key in PYDANTIC_BOUND_KEYWORDS and _is_number(value)}
    bounds = {PYDANTIC_BOUND_KEYWORDS[key]: schema[key] for key in lifted}
    lengths = {key: value for key, value in schema.items() if key in _LENGTH_KEYWORDS}
    if bounds and canonical.get("type") in ("integer", "number") and alternative.get("type") == "string":
        canonical = {**canonical, **bounds}
        if canonical["type"] == "integer":
            canonical, alternative = _inclusive_integer_bounds(canonical, alternative)
        rest = {key: value for key, value in schema.items() if key not in lifted}
        return {**rest, "anyOf": [canonical, alternative]}
    if lengths and alternative.get("contentMediaType") == _JSON_TEXT_MEDIA_TYPE and "contentSchema" in alternative:
        content = alternative["contentSchema"]
        if isinstance(content, dict) and content == {key: v for key, v in canonical.items() if key not in lengths}:
            text_form = {**alternative, "contentSchema": {**content, **lengths}}
            rest = {key: value for key, value in schema.items() if key not in _LENGTH_KEYWORDS}
            return {**rest, "anyOf": [{**canonical, **lengths}, text_form]}
    return schema


def _portable_fragment_read_back(schema: Schema) -> Schema:
    """A lenient scalar's part of the portable shape, as pydantic's own generator has it write
    (`pydantic_lenient.types.portable_rules`), read back as the ``anyOf`` the other styles start
    from: ``nullable`` gone beside a ``null`` branch, a number's text after its ``number`` branch,
    and the ``number`` branch of an integer's digit string (a pattern of the library's own) an
    ``integer`` again."""
    members = schema.get("anyOf") if isinstance(schema, dict) else None
    if not isinstance(members, list) or not all(isinstance(member, dict) for member in members):
        return schema
    ordered = list(members)
    if {"type": "null", "nullable": True} in ordered:  # the null branch says it: nullable adds nothing
        ordered = [{key: value for key, value in member.items() if key != "nullable"} for member in ordered]
    for index in range(len(ordered) - 1):
        text, number = ordered[index], ordered[index + 1]
        if number.get("type") == "number" and _STRING_FORM_TYPES.get(text.get("pattern", "")) == "number":
            ordered[index], ordered[index + 1] = number, text
    read = []
    for index, member in enumerate(ordered):
        after = ordered[index + 1] if index + 1 < len(ordered) else None
        as_integer = {**member, "type": "integer"}
        if (
            member.get("type") == "number"
            and after is not None
            and not _is_scalar_string_form(after, [member])
            and _is_scalar_string_form(after, [as_integer])
        ):
            member = as_integer
        read.append(member)
    return schema if read == members else {**schema, "anyOf": read}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _inclusive_integer_bounds(canonical: Schema, string_form: Schema) -> tuple[Schema, Schema]:
    """An integer branch's bounds as one inclusive ``minimum``/``maximum``, and its digit pattern narrowed to them."""
    lower, upper, unread = integer_range(canonical.items())
    if any(key in BOUND_KEYWORDS and key != "multipleOf" for key in unread):
        return canonical, string_form  # a bound that is no finite number
    narrowed = {key: value for key, value in canonical.items() if key not in ("exclusiveMinimum", "exclusiveMaximum")}
    narrowed.update({key: bound for key, bound in (("minimum", lower), ("maximum", upper)) if bound is not None})
    pattern = string_form.get("pattern")
    if isinstance(pattern, str):
        base = pattern_without_null(pattern)
        tightened = narrowed_digit_pattern(pattern if base is None else base, lower, upper)
        string_form = {**string_form, "pattern": tightened if base is None else pattern_with_null(tightened)}
    return narrowed, string_form


def _json_text_content(branch: Schema) -> list[Schema] | None:
    """The branches a JSON-text string branch says its text holds; None if it is not one."""
    if not (
        isinstance(branch, dict)
        and branch.get("type") == "string"
        and branch.get("contentMediaType") == _JSON_TEXT_MEDIA_TYPE
        and set(branch) <= {"type", "contentMediaType", "contentSchema"}
    ):
        return None
    if "contentSchema" not in branch:  # plain JsonText: any array or object
        return [{"type": "array"}, {"type": "object"}]
    content = branch["contentSchema"]
    if isinstance(content, dict) and set(content) == {"anyOf"} and isinstance(content["anyOf"], list):
        return list(content["anyOf"])
    return [content]


def _without_alternative_forms(schema: Schema) -> Schema:
    """The ``strict`` rewrite of one node: the canonical branches of each widened ``anyOf``."""
    schema = _flatten_nested_any_of(_type_array_to_any_of(schema))
    members = schema.get("anyOf") if isinstance(schema, dict) else None
    if not isinstance(members, list):
        return schema
    kept: list[Schema] = []
    index = 0
    while index < len(members):
        branch = members[index]
        content = _json_text_content(branch)
        if content is not None and content and all(part in members[:index] for part in content):
            index += 1  # LenientJson: the text of an earlier branch
            continue
        if content is not None and content and members[index + 1 : index + 1 + len(content)] == content:
            kept.append(branch)  # JsonText: the text is canonical, the raw structure after it is not
            index += 1 + len(content)
            continue
        if not _is_scalar_string_form(branch, members[:index]):
            kept.append(branch)
        index += 1
    rest = {key: value for key, value in schema.items() if key != "anyOf"}
    if len(kept) == len(members):
        return schema  # nothing widened here: an anyOf of one branch keeps its own scope
    if (
        len(kept) == 1
        and isinstance(kept[0], dict)
        and kept[0].keys().isdisjoint(rest)
        and kept[0].keys().isdisjoint(_SEES_ITS_SIBLINGS)
    ):
        return {**kept[0], **rest}
    return {"anyOf": kept, **rest}


# A branch with these would read its new siblings differently once merged into its parent:
# unevaluated* would count what they evaluate, and an $id or anchor would move their references.
_SEES_ITS_SIBLINGS = frozenset(
    {"unevaluatedProperties", "unevaluatedItems", "$id", "$anchor", "$dynamicAnchor", "$schema"}
)


_STYLE_REWRITES: dict[str, Callable[[Schema], Schema]] = {
    "type-array": lambda node: _any_of_to_type_array(_flatten_nested_any_of(_members_as_any_of(node))),
    "any-of": lambda node: _flatten_nested_any_of(_type_array_to_any_of(node)),
    "strict": _without_alternative_forms,
}


def _style_rewrite(style: Style) -> Callable[[Schema], Schema]:
    try:
        return _STYLE_REWRITES[style]
    except KeyError:
        raise ValueError(f"unknown style {style!r}; expected one of {', '.join(STYLES)}") from None


def apply_style(source: type[BaseModel] | Mapping[str, Any], style: Style) -> dict[str, Any]:
    """``source`` in ``style``'s shape: the one style stage (see the module docs).

    ``source`` is a model (its validation-mode JSON schema is restyled) or a finished JSON schema,
    generated by any generator, whole or a subschema. The ``type-array`` and ``any-of`` styles
    never change what a schema admits; ``strict`` keeps only the canonical branches of the
    widened forms the lenient types write. Pydantic's OpenAPI ``discriminator`` is dropped.
    Raises `ValueError` for an unknown style and `TypeError` for any other ``source``.

    >>> from pydantic_lenient import apply_style
    >>> apply_style({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}, "type-array")
    {'type': ['integer', 'null'], 'minimum': 0}
    >>> apply_style({"type": ["integer", "null"]}, "any-of")
    {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}
    >>> apply_style([1], "any-of")
    Traceback (most recent call last):
      ...
    TypeError: apply_style needs a pydantic model class or a JSON schema, not [1]
    """
    if style == "portable":  # a rewrite of the whole any-of document: it follows $refs from the root
        return portable_shape(apply_style(source, "any-of"), lambda node: apply_style(node, "strict"))
    rewrite = _style_rewrite(style)
    if isinstance(source, type) and issubclass(source, _base_model()):
        with rendering(Rendering.RESTYLED):  # the markers' any-of fragments, which this stage reads
            schema: Any = source.model_json_schema(mode="validation")
    elif isinstance(source, Mapping):
        schema = source
    else:
        raise TypeError(f"apply_style needs a pydantic model class or a JSON schema, not {source!r}")

    def restyled(node: Schema, rewrite: Callable[[Schema], Schema] = rewrite) -> Schema:
        return transform_bottom_up(
            node,
            lambda node: rewrite(_standard_keywords(_portable_fragment_read_back(_without_openapi_keywords(node)))),
        )

    # A property mirrored into an HTTP header keeps the one type the spec allows it (`mcp_headers`).
    return dict(restyled(with_header_properties(schema, lambda node: restyled(node, _without_alternative_forms))))


def _base_model() -> type[BaseModel]:
    from pydantic import BaseModel

    return BaseModel


def is_in_style(schema: Mapping[str, Any], style: Style) -> bool:
    """Whether a finished schema is already written in ``style``: restyling it would change nothing.

    Unlike `apply_style`, the restyling it compares with leaves pydantic's constraint names
    (``ge``) as they are, rather than rewriting them into the bounds they mean: they are a defect
    of what is advertised, which the audit reports, not a style.

    >>> from pydantic_lenient.schema.styles import is_in_style
    >>> is_in_style({"type": ["integer", "null"]}, "type-array"), is_in_style({"type": ["integer", "null"]}, "any-of")
    (True, False)
    """

    style_rewrite = _style_rewrite("any-of" if style == "portable" else style)

    def restyled(node: Schema, rewrite: Callable[[Schema], Schema] = style_rewrite) -> Schema:
        return transform_bottom_up(
            node, lambda node: rewrite(_portable_fragment_read_back(_without_openapi_keywords(node)))
        )

    result = restyled(with_header_properties(schema, lambda node: restyled(node, _without_alternative_forms)))
    if style == "portable":
        result = portable_shape(result, lambda node: apply_style(node, "strict"))
    return bool(result == schema)


def _without_openapi_keywords(schema: Schema) -> Schema:
    """Drop pydantic's OpenAPI ``discriminator``: no JSON Schema meaning, and Ajv in its default
    strict mode refuses to compile a schema that has it. The ``oneOf`` beside it still validates."""
    if isinstance(schema, dict) and isinstance(schema.get("discriminator"), dict):
        return {key: value for key, value in schema.items() if key != "discriminator"}
    return schema
