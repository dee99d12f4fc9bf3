"""Every provider target, through that provider's own SDK code, offline (no network, no API key).

For every lenient type (Optional or not, with bounds), LenientJson, JsonText, nested models and
tuples, the target's schema goes through the conversion or validation the SDK applies to a tool
schema, and:

* nothing is refused: no exception, no "not strict-compatible" verdict;
* the SDK changes nothing, or changes only what it can say as well (so nothing it would move into a
  description or drop is left for it to drop);
* nothing the server accepts is lost: every value the model accepts passes the schema the SDK
  produced (read as JSON Schema, or as Gemini's OpenAPI subset).

The SDKs come with the ``providers`` extra (google-genai, anthropic, openai-agents) and the
``pydantic-ai`` extra.
"""

from __future__ import annotations

import copy
import functools
import logging
import typing
from collections.abc import Callable
from typing import Annotated, Any, Optional

import pytest
from pydantic import BaseModel, Field, create_model

from pydantic_lenient import (
    JsonText,
    LenientFloat,
    LenientInt,
    LenientJson,
    LenientUInt,
    Target,
    input_schema,
    target_schema,
)
from pydantic_lenient.testing import host_validator
from tests.contract import FIXED_VALUES, JSON_CORPUS, SCALAR_TYPES, server_verdict, tool_model
from tests.losses import explained
from tests.sdks import require
from tests.types_.test_json_values import Step, Tool

logging.getLogger("google_genai").setLevel(logging.ERROR)  # it logs a note on each conversion


class Nested(BaseModel):
    step: Step
    steps: list[Step] = []
    pair: tuple[LenientUInt, str] = (0, "")
    ratio: Annotated[LenientFloat, Field(gt=0, le=1)] = 0.5
    maybe: Optional[tuple[LenientInt, ...]] = None


# One model per case: each lenient scalar, required and Optional, and the JSON-shaped and nested ones.
MODELS: dict[str, type[BaseModel]] = {
    **{
        f"{name}{'?' if optional else ''}": tool_model(annotation, optional=optional)
        for name, (annotation, _) in SCALAR_TYPES.items()
        for optional in (False, True)
    },
    "json-fields": Tool,
    "nested": Nested,
    "LenientJson[list[str]]?": create_model("Urls", value=(Optional[LenientJson[list[str]]], None)),
    "JsonText": create_model("Text", value=(JsonText, ...)),
}


# Arguments every property of which the model accepts; samples vary one property at a time.
BASES: dict[str, dict[str, Any]] = {
    "nested": {"step": {"action": "a", "limit": 1}, "steps": [], "pair": [0, ""], "ratio": 0.5, "maybe": None},
    "JsonText": {"value": "[]"},
}


@functools.cache
def _accepted(case: str) -> list[tuple[str, dict[str, Any]]]:
    """(property, arguments) the model accepts, every property present (as strict providers make the
    model send them), for the test corpora's values in one property at a time."""
    model = MODELS[case]
    base = BASES.get(case, dict.fromkeys(model.model_fields))
    values = [*FIXED_VALUES, *JSON_CORPUS, [{"action": "a", "limit": "5"}], {"action": "a"}, [1, "x"], ["7", "x"]]
    samples = [
        (name, arguments)
        for name in model.model_fields
        for value in values
        if server_verdict(model, arguments := {**base, name: value}).accepted
    ]
    assert len(samples) > len(model.model_fields)
    return samples


def _admits_all(target: Target, case: str, admits: Callable[[Any], bool]) -> None:
    """Every sample the model accepts passes ``admits`` (the schema an SDK produced), except in a field
    where the target reported a loss (a closed free-form object, say: its JSON text still passes)."""
    result = target_schema(MODELS[case], target)
    for name, arguments in _accepted(case):
        assert admits(arguments) or explained(result, name), (target, case, arguments)


def _json_schema_admits(schema: dict[str, Any]) -> Callable[[Any], bool]:
    validator = host_validator(schema)
    return lambda value: bool(validator.is_valid(value))


CASES = list(MODELS)


# --- OpenAI strict function calling ---------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_openai_target_is_already_strict_for_openai_agents(case: str) -> None:
    strict = require("agents.strict_schema")
    schema = target_schema(MODELS[case], "openai").schema
    converted = strict.ensure_strict_json_schema(copy.deepcopy(schema))
    assert converted == schema
    _admits_all("openai", case, _json_schema_admits(converted))


@pytest.mark.parametrize("case", CASES)
def test_openai_target_is_strict_compatible_for_pydantic_ai(case: str) -> None:
    providers = require("pydantic_ai.providers.openai")
    transformer_class = providers.OpenAIProvider.model_profile("gpt-5")["json_schema_transformer"]
    schema = target_schema(MODELS[case], "openai").schema
    transformer = transformer_class(copy.deepcopy(schema), strict=None)
    walked = transformer.walk()
    assert transformer.is_strict_compatible, case
    _admits_all("openai", case, _json_schema_admits(walked))
    # With strict=True it would rewrite what it cannot take: there is nothing left to rewrite.
    strict = transformer_class(copy.deepcopy(schema), strict=True).walk()
    assert strict == walked


# --- Anthropic tools (strict tool use) ------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_anthropic_target_is_a_fixed_point_of_transform_schema(case: str) -> None:
    anthropic = require("anthropic")
    schema = target_schema(MODELS[case], "anthropic").schema
    converted = anthropic.transform_schema(copy.deepcopy(schema))
    assert converted == schema  # nothing more moved into a description
    _admits_all("anthropic", case, _json_schema_admits(converted))


@pytest.mark.parametrize("case", CASES)
def test_anthropic_target_passes_pydantic_ai_strict_tools(case: str) -> None:
    providers = require("pydantic_ai.providers.anthropic")
    schema = target_schema(MODELS[case], "anthropic").schema
    walked = providers.AnthropicJsonSchemaTransformer(copy.deepcopy(schema), strict=True).walk()
    _admits_all("anthropic", case, _json_schema_admits(walked))


# --- Google Gemini function declarations ------------------------------------------------------------


def _openapi_admits(schema: dict[str, Any], value: Any) -> bool:
    """Whether a google-genai ``Schema`` (its model_dump) admits ``value``, reading it as Gemini's
    OpenAPI 3.0 subset: ``nullable`` adds null, ``anyOf`` is a union, no other keyword widens."""
    return bool(host_validator(_as_json_schema(schema)).is_valid(value))


def _as_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    renames = {"min_items": "minItems", "max_items": "maxItems", "min_length": "minLength", "max_length": "maxLength"}
    for key, value in schema.items():
        if value is None or key in ("nullable", "title", "description", "default", "property_ordering"):
            continue
        if key == "type":
            result["type"] = str(getattr(value, "value", value)).lower()
        elif key == "any_of":
            result["anyOf"] = [_as_json_schema(member) for member in value]
        elif key == "items":
            result["items"] = _as_json_schema(value)
        elif key == "properties":
            result["properties"] = {name: _as_json_schema(member) for name, member in value.items()}
        elif key == "additional_properties":
            result["additionalProperties"] = _as_json_schema(value) if isinstance(value, dict) else value
        else:
            result[renames.get(key, key)] = value
    if schema.get("nullable"):
        return {"anyOf": [result, {"type": "null"}]}
    return result


def _dump(schema: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = schema.model_dump(exclude_none=True)
    return dumped


def _typeless_branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Schemas (of a google-genai ``Schema`` dump) with neither a type nor a union: Gemini cannot read
    them, and google-genai writes one for the null branch of a union of more than two."""
    found = []
    pending: list[Any] = [schema]
    while pending:
        node = pending.pop()
        if "type" not in node and "any_of" not in node:
            found.append(node)
        pending.extend(node.get("any_of", []))
        pending.extend(node.get("properties", {}).values())
        if "items" in node:
            pending.append(node["items"])
    return found


@pytest.mark.parametrize("case", CASES)
def test_gemini_target_converts_with_from_json_schema(case: str) -> None:
    types = require("google.genai.types")
    schema = target_schema(MODELS[case], "gemini").schema
    converted = _dump(types.Schema.from_json_schema(json_schema=types.JSONSchema(**copy.deepcopy(schema))))
    assert not _typeless_branches(converted), converted
    _admits_all("gemini", case, functools.partial(_openapi_admits, converted))


@pytest.mark.parametrize("case", CASES)
def test_gemini_target_is_a_valid_openapi_schema_and_json_schema(case: str) -> None:
    types = require("google.genai.types")
    schema = target_schema(MODELS[case], "gemini").schema
    types.JSONSchema.model_validate(copy.deepcopy(schema))
    as_openapi = _dump(types.Schema.model_validate(copy.deepcopy(schema)))
    _admits_all("gemini", case, functools.partial(_openapi_admits, as_openapi))
    declaration = types.FunctionDeclaration(name="tool", parameters=copy.deepcopy(schema))
    assert declaration.parameters is not None


@pytest.mark.parametrize("case", CASES)
def test_gemini_target_passes_pydantic_ai_google_transformers(case: str) -> None:
    google = require("pydantic_ai.profiles.google")
    types = require("google.genai.types")
    schema = target_schema(MODELS[case], "gemini").schema
    walked = google.GoogleJsonSchemaTransformer(copy.deepcopy(schema)).walk()
    _admits_all("gemini", case, _json_schema_admits(walked))
    openapi = google.GoogleOpenAPISchemaTransformer(copy.deepcopy(schema)).walk()
    as_openapi = _dump(types.Schema.model_validate(openapi))
    _admits_all("gemini", case, functools.partial(_openapi_admits, as_openapi))


# --- why the targets exist: the MCP shapes in the same SDK code ---------------------------------------


def test_type_arrays_break_anthropic_and_gemini_openapi_schema() -> None:
    anthropic = require("anthropic")
    types = require("google.genai.types")
    schema = input_schema(MODELS["LenientUInt?"], style="type-array")
    with pytest.raises(AssertionError):
        anthropic.transform_schema(copy.deepcopy(schema))
    with pytest.raises(AttributeError):
        types.Schema.model_validate(copy.deepcopy(schema))


@pytest.mark.parametrize("style", ["type-array", "any-of"])
def test_json_text_keywords_are_refused_by_gemini_json_schema(style: Any) -> None:
    types = require("google.genai.types")
    pydantic = require("pydantic")
    with pytest.raises(pydantic.ValidationError, match="contentMediaType"):
        types.JSONSchema.model_validate(input_schema(MODELS["LenientJson[list[str]]?"], style=style))


def test_gemini_from_callable_requires_optional_lenient_parameters() -> None:
    """google-genai's from_callable reads ``Optional[LenientUInt] = None`` as required (its three-way
    anyOf becomes a typeless nullable branch), where plain ``Optional[int] = None`` is optional. The
    README's workaround: declare the function with the gemini target's schema."""
    types = require("google.genai.types")

    def search(folder: str, limit: Optional[LenientUInt] = None, plain: Optional[int] = None) -> str:
        return folder

    search.__annotations__ = typing.get_type_hints(search, include_extras=True)  # as without __future__

    declared = types.FunctionDeclaration.from_callable_with_api_option(callable=search, api_option="GEMINI_API")
    assert declared.parameters is not None
    assert declared.parameters.required == ["folder", "limit"]
    model = create_model("search", folder=(str, ...), limit=(Optional[LenientUInt], None), plain=(Optional[int], None))
    schema = target_schema(model, "gemini").schema
    converted = types.Schema.from_json_schema(json_schema=types.JSONSchema(**schema))
    assert converted.properties is not None
    assert converted.properties["limit"].nullable is True
    assert schema["required"] == ["folder"]


@pytest.mark.parametrize("case", ["LenientUInt?", "LenientJson[list[str]]?"])
def test_openai_agents_accepts_every_style_as_is(case: str) -> None:
    strict = require("agents.strict_schema")
    for style in ("type-array", "any-of", "strict"):
        schema = input_schema(MODELS[case], style=style)
        converted = strict.ensure_strict_json_schema(copy.deepcopy(schema))
        assert converted["properties"]["value"] == {
            k: v for k, v in schema["properties"]["value"].items() if k != "default"
        }
