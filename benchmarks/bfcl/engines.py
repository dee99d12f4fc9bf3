"""The engines the repair benchmark scores: each takes a tool schema once, then calls.

An engine is ``prepare(schema) -> call``; ``call(arguments)`` returns the arguments the tool would
run with, or None when the call is refused (the model gets an error). Preparation (compiling a
schema, building a model) is done once per tool, as a host or server caches it, and is not timed.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import version
from typing import Any, Literal, NamedTuple

import json_repair
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from qwen_coercion import QwenCoercion

from pydantic_lenient import __version__ as lenient_version
from pydantic_lenient.repair import Repairer

__all__ = ("ENGINES", "Engine", "model_for")

Call = Callable[[Any], "dict[str, Any] | None"]


class Engine(NamedTuple):
    """``takes_text``: the call is given the arguments as JSON text (json_repair reads text)."""

    name: str
    version: str
    prepare: Callable[[dict[str, Any]], Call]
    takes_text: bool = False


def _annotation(schema: dict[str, Any], name: str, base: type[BaseModel]) -> Any:
    """The Python type a tool author would have written for ``schema`` (what FastMCP validates with)."""
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if kind == "string":
        return str
    if kind == "integer":
        return int
    if kind == "number":
        return float
    if kind == "boolean":
        return bool
    if kind == "array":
        items = schema.get("items")
        return list[_annotation(items, f"{name}Item", BaseModel)] if isinstance(items, dict) else list[Any]  # type: ignore[misc]
    if kind == "object":
        return model_for(schema, name, BaseModel) if "properties" in schema else dict[str, Any]
    return Any


def model_for(schema: dict[str, Any], name: str = "Arguments", base: type[BaseModel] = BaseModel) -> type[BaseModel]:
    """A pydantic model of an object schema: a field per property (aliased, so any name works),
    required ones without a default. Unknown keys are ignored, as pydantic and the SDKs do."""
    required = set(schema.get("required", ()))
    fields: dict[str, Any] = {}
    for index, (key, sub) in enumerate(schema.get("properties", {}).items()):
        annotation = _annotation(sub, f"{name}_{index}", base)
        default = ... if key in required else sub.get("default")
        fields[f"field_{index}"] = (annotation, Field(default, alias=key))
    return create_model(name, __base__=base, **fields)


def _dumped(instance: BaseModel) -> dict[str, Any]:
    return instance.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _lenient(schema: dict[str, Any]) -> Call:
    repairer = Repairer(schema)
    return lambda arguments: repairer.repair(arguments).arguments


def _pydantic_lax(schema: dict[str, Any]) -> Call:
    model = model_for(schema)

    def call(arguments: Any) -> dict[str, Any] | None:
        try:
            return _dumped(model.model_validate(arguments))
        except ValidationError:
            return None

    return call


class _SdkArguments(ArgModelBase):
    model_config = ConfigDict(arbitrary_types_allowed=True)


def _mcp_sdk(schema: dict[str, Any]) -> Call:
    metadata = FuncMetadata(arg_model=model_for(schema, base=_SdkArguments))

    def call(arguments: Any) -> dict[str, Any] | None:
        try:  # what FuncMetadata.validate_arguments does, dumped as JSON for the comparison
            return _dumped(metadata.arg_model.model_validate(metadata.pre_parse_json(arguments)))
        except ValidationError:
            return None

    return call


def _json_repair(schema: dict[str, Any]) -> Call:
    def call(text: str) -> dict[str, Any] | None:
        try:
            repaired = json_repair.repair_json(text, schema=schema, return_objects=True)
        except ValueError:  # its schema mode raises when the repaired value still does not validate
            return None
        return repaired if isinstance(repaired, dict) else None

    return call


def _qwen(schema: dict[str, Any]) -> Call:
    return QwenCoercion(schema)


ENGINES = (
    Engine("pydantic-lenient repair", lenient_version, _lenient),
    Engine("pydantic lax (FastMCP)", version("pydantic"), _pydantic_lax),
    Engine("MCP SDK pre_parse_json + lax", version("mcp"), _mcp_sdk),
    Engine("json_repair schema mode", version("json-repair"), _json_repair, takes_text=True),
    Engine("qwen-code coercion (port)", "0700c6e", _qwen),
)
AJV = "Ajv coerceTypes"
