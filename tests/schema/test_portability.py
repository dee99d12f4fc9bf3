"""The README's portability table, measured: what each host or provider SDK does with each keyword.

Each probe is a small tool schema using one feature; each consumer compiles or converts it with its
own code, offline. A cell is ``kept`` (taken as written, or rewritten to the same meaning),
``refused`` (an error), ``ignored`` (taken, and not enforced), or ``moved`` (dropped, or moved into a
description). The README's table ("Where a schema goes") is this one.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

from tests.conftest import AjvRunner
from tests.sdks import require

logging.getLogger("google_genai").setLevel(logging.ERROR)

_ROOT: dict[str, Any] = {"type": "object", "required": ["x"]}
PROBES: dict[str, dict[str, Any]] = {
    "type arrays": {**_ROOT, "properties": {"x": {"type": ["integer", "string"]}}},
    "anyOf (property)": {**_ROOT, "properties": {"x": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}},
    "anyOf (root)": {
        "anyOf": [
            {**_ROOT, "properties": {"x": {"type": "integer"}}},
            {**_ROOT, "properties": {"x": {"type": "string"}}},
        ]
    },
    "pattern": {**_ROOT, "properties": {"x": {"type": "string", "pattern": "^[0-9]+$"}}},
    "minimum/maximum": {**_ROOT, "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 9}}},
    "contentMediaType/contentSchema": {
        **_ROOT,
        "properties": {
            "x": {"type": "string", "contentMediaType": "application/json", "contentSchema": {"type": "array"}}
        },
    },
    "$defs/$ref": {
        **_ROOT,
        "properties": {"x": {"$ref": "#/$defs/X"}},
        "$defs": {"X": {"type": "object", "properties": {"y": {"type": "integer"}}, "required": ["y"]}},
    },
    "default": {**_ROOT, "properties": {"x": {"type": "integer", "default": 3}}},
    "prefixItems": {
        **_ROOT,
        "properties": {
            "x": {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
            }
        },
    },
}
# A value each probe's keyword refuses, and one it admits: a host that compiles the probe and
# admits the first ignores the keyword.
REFUSED_AND_ADMITTED: dict[str, tuple[Any, Any]] = {
    "type arrays": (True, "1"),
    "anyOf (property)": (True, "1"),
    "anyOf (root)": (True, "1"),
    "pattern": ("a", "1"),
    "minimum/maximum": (10, 1),
    "contentMediaType/contentSchema": (1, "[]"),
    "$defs/$ref": ({"y": "a"}, {"y": 1}),
    "default": ("a", 1),
    "prefixItems": (["a", 1], [1, "a"]),
}

# The table, as the README shows it.
EXPECTED: dict[str, dict[str, str]] = {
    "Ajv 8, defaults (2020-12)": dict.fromkeys(PROBES, "kept"),
    "Ajv 8, strict: true": {**dict.fromkeys(PROBES, "kept"), "type arrays": "refused"},
    "MCP TypeScript SDK (Ajv, draft-07)": {**dict.fromkeys(PROBES, "kept"), "prefixItems": "ignored"},
    "OpenAI strict (openai-agents, pydantic-ai)": {
        **dict.fromkeys(PROBES, "kept"),
        "anyOf (root)": "refused",
        "default": "moved",
        "prefixItems": "refused",
    },
    "Anthropic strict (transform_schema)": {
        **dict.fromkeys(PROBES, "kept"),
        "type arrays": "refused",
        "pattern": "moved",
        "minimum/maximum": "moved",
        "contentMediaType/contentSchema": "moved",
        "default": "moved",
        "prefixItems": "moved",
    },
    "Gemini (google-genai JSONSchema, from_json_schema)": {
        **dict.fromkeys(PROBES, "kept"),
        "contentMediaType/contentSchema": "refused",
        "prefixItems": "refused",
    },
    "Gemini OpenAPI Schema (parameters)": {
        **dict.fromkeys(PROBES, "kept"),
        "type arrays": "refused",
        "contentMediaType/contentSchema": "refused",
        "$defs/$ref": "refused",
        "prefixItems": "refused",
    },
}


def _converted(convert: Callable[[dict[str, Any]], Any], probe: str) -> str:
    """``kept`` when the conversion leaves the probe's property as it was, ``moved`` when it changes
    it, ``refused`` when it raises."""
    schema = copy.deepcopy(PROBES[probe])
    try:
        result = convert(copy.deepcopy(schema))
    except Exception:
        return "refused"
    return "kept" if result is None or result == schema else "moved"


def _openai(schema: dict[str, Any]) -> Any:
    strict = require("agents.strict_schema")
    providers = require("pydantic_ai.providers.openai")
    transformer_class = providers.OpenAIProvider.model_profile("gpt-5")["json_schema_transformer"]
    converted = strict.ensure_strict_json_schema(copy.deepcopy(schema))
    walked = transformer_class(copy.deepcopy(schema), strict=True).walk()
    for result in (converted, walked):  # both close every object and require every property
        for node in (result, *result.get("$defs", {}).values(), *result.get("anyOf", [])):
            node.pop("additionalProperties", None)
    return converted if converted == walked else walked


def _anthropic(schema: dict[str, Any]) -> Any:
    converted = require("anthropic").transform_schema(schema)
    for node in (converted, *converted.get("$defs", {}).values(), *converted.get("anyOf", [])):
        node.pop("additionalProperties", None)
    return converted


def _gemini(schema: dict[str, Any]) -> Any:
    types = require("google.genai.types")
    types.Schema.from_json_schema(json_schema=types.JSONSchema(**schema))
    return None  # converted into Gemini's own shape, which keeps the meaning of every probe it takes


def _gemini_openapi(schema: dict[str, Any]) -> Any:
    types = require("google.genai.types")
    types.Schema.model_validate(schema)
    return None


def test_the_portability_table(ajv: AjvRunner) -> None:
    measured: dict[str, dict[str, str]] = {}
    setups = {
        "Ajv 8, defaults (2020-12)": ("2020-12", {}),
        "Ajv 8, strict: true": ("2020-12", {"strict": True}),
        "MCP TypeScript SDK (Ajv, draft-07)": (
            "07",
            {"strict": False, "validateFormats": True, "validateSchema": False, "allErrors": True},
        ),
    }
    for host, (draft, options) in setups.items():
        results = ajv(
            [
                {
                    "schema": PROBES[probe],
                    "values": [{"x": value} for value in REFUSED_AND_ADMITTED[probe]],
                    "draft": draft,
                    "options": options,
                }
                for probe in PROBES
            ]
        )
        measured[host] = {
            probe: "refused" if result["compile_error"] else "ignored" if result["verdicts"][0] else "kept"
            for probe, result in zip(PROBES, results, strict=True)
        }
    for consumer, convert in [
        ("OpenAI strict (openai-agents, pydantic-ai)", _openai),
        ("Anthropic strict (transform_schema)", _anthropic),
        ("Gemini (google-genai JSONSchema, from_json_schema)", _gemini),
        ("Gemini OpenAPI Schema (parameters)", _gemini_openapi),
    ]:
        measured[consumer] = {probe: _converted(convert, probe) for probe in PROBES}
    assert measured == EXPECTED
