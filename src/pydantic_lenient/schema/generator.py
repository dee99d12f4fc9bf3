"""`LenientJsonSchema`: pydantic's JSON schema generator followed by the style stage, one subclass
per style (`generator_for`). Kept apart from `pydantic_lenient.schema.styles`, which restyles plain
JSON schemas without loading pydantic.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import CoreSchema

from pydantic_lenient.types.portable_rules import Rendering, rendering

from .styles import DEFAULT_STYLE, STYLES, Style, apply_style

__all__ = ("LenientJsonSchema", "generator_for")


class LenientJsonSchema(GenerateJsonSchema):
    """pydantic's JSON schema generator, followed by `apply_style`'s stage for ``style``.

    Use a subclass from `generator_for`, or pass it to ``model_json_schema(schema_generator=...)``.


    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientJsonSchema, LenientUInt
    >>> class Page(BaseModel):
    ...     size: LenientUInt
    >>> Page.model_json_schema(schema_generator=LenientJsonSchema)["properties"]["size"]
    {'anyOf': [{'minimum': 0, 'type': 'number'}, {'pattern': '^[0-9]+$', 'type': 'string'}], 'title': 'Size'}
    """

    style: ClassVar[Style] = DEFAULT_STYLE

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> JsonSchemaValue:
        with rendering(Rendering.RESTYLED):  # the markers' any-of fragments, which the style stage reads
            generated = super().generate(schema, mode=mode)
        return apply_style(generated, self.style)


_GENERATORS: dict[Style, type[LenientJsonSchema]] = {
    style: type(f"LenientJsonSchema_{style.replace('-', '_')}", (LenientJsonSchema,), {"style": style})
    for style in STYLES
}


def generator_for(style: Style) -> type[LenientJsonSchema]:
    """The `LenientJsonSchema` subclass that writes ``style``.


    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientUInt, generator_for
    >>> class Page(BaseModel):
    ...     size: LenientUInt
    >>> Page.model_json_schema(schema_generator=generator_for("strict"))["properties"]["size"]
    {'minimum': 0, 'type': 'integer', 'title': 'Size'}
    >>> generator_for("loose")
    Traceback (most recent call last):
      ...
    ValueError: unknown style 'loose'; expected one of portable, type-array, any-of, strict
    """
    try:
        return _GENERATORS[style]
    except KeyError:
        raise ValueError(f"unknown style {style!r}; expected one of {', '.join(STYLES)}") from None
