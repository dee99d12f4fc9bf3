"""Issue 32: one intent, one verdict, whatever way in and whatever spelling the author used.

The intent: an optional page size from 1 to 500. Each way in (hand-written lenient types, with the
bound inside or outside the ``Optional``; ``Lenient[...]``; `lenient_model`; `lenient_tool`;
`make_lenient` and `LenientMiddleware`, on plain parameters and on hand-written ones) must take
``"null"`` as None (the one ``"null"`` policy, docs/types.md#the-string-null), read ``"007"`` as 7
(the one leading-zeros policy), and refuse ``"0"``, ``"0000"`` and ``"501"`` with each bound; and a
host checking the advertised schema must give the same verdict as the server, value for value.

The one documented exception: a bare hand-written ``Optional[LenientInt]`` cannot see its
``Optional`` (pydantic builds the member's schema before wrapping it), so it refuses ``"null"``,
on both sides (docs/types.md#the-string-null). Its rows assert exactly that.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Optional

import pytest
from pydantic import BaseModel, Field, ValidationError

from pydantic_lenient import Lenient, LenientInt, input_schema, lenient_model, lenient_tool
from pydantic_lenient.schema import model_from_function
from pydantic_lenient.testing import host_validator
from tests.sdks import require

REFUSED = object()
"""The verdict of a value the server refuses (and the host must refuse too)."""

# The one verdict for each value sent as the page size.
VERDICTS: dict[str, tuple[Any, Any]] = {
    "null text": ("null", None),
    "null": (None, None),
    "leading zeros": ("007", 7),
    "zero text": ("0", REFUSED),
    "zeros text": ("0000", REFUSED),
    "lower bound text": ("1", 1),
    "upper bound text": ("500", 500),
    "past the upper bound text": ("501", REFUSED),
    "lower bound": (1, 1),
    "upper bound": (500, 500),
    "zero": (0, REFUSED),
    "past the upper bound": (501, REFUSED),
    "minus one text": ("-1", REFUSED),
    "fraction text": ("1.5", REFUSED),
    "word": ("ten", REFUSED),
}

# Where the pydantic-native way cannot follow the policy, and the documented verdict it gives instead.
HAND_WRITTEN_NULL = {"null text": REFUSED}


def _limit(limit: Optional[int] = Field(None, ge=1, le=500)) -> str:
    """Return the page size as received."""
    return json.dumps(limit)


def _limit_hand_written(limit: Optional[Annotated[LenientInt, Field(ge=1, le=500)]] = None) -> str:
    """Return the page size as received."""
    return json.dumps(limit)


class _Plain(BaseModel):
    limit: Optional[int] = Field(None, ge=1, le=500)


class _HandWrittenOutside(BaseModel):
    limit: Annotated[Optional[LenientInt], Field(ge=1, le=500)] = None


class _HandWrittenInside(BaseModel):
    limit: Optional[Annotated[LenientInt, Field(ge=1, le=500)]] = None


class _LenientSpelled(BaseModel):
    limit: Lenient[Optional[Annotated[int, Field(ge=1, le=500)]]] = None


@dataclass(frozen=True)
class Served:
    """What a way in advertises for the tool's arguments, and what it made of each value."""

    schema: dict[str, Any]
    received: list[Any]


@dataclass(frozen=True)
class Way:
    name: str
    serve: Callable[[list[Any]], Served]
    exceptions: dict[str, Any] = field(default_factory=dict)


def _validated(model: type[BaseModel], value: Any) -> Any:
    try:
        return model.model_validate({"limit": value}).limit  # type: ignore[attr-defined]
    except ValidationError:
        return REFUSED


def _in_process(model: type[BaseModel]) -> Callable[[list[Any]], Served]:
    def serve(values: list[Any]) -> Served:
        return Served(input_schema(model), [_validated(model, value) for value in values])

    return serve


def _received(is_error: bool, text: str) -> Any:
    return REFUSED if is_error else json.loads(text)


async def _official(tool: Callable[..., str], lenient_parameters: bool, values: list[Any]) -> Served:
    mcp = require("mcp")
    from mcp.server.mcpserver import MCPServer

    from pydantic_lenient.adapters.mcp import make_lenient

    server: Any = make_lenient(MCPServer("one-verdict"), lenient_parameters=lenient_parameters)
    server.tool(name="tool")(tool)
    async with mcp.Client(server) as client:
        schema = dict((await client.list_tools()).tools[0].input_schema)
        received = []
        for value in values:
            result = await client.call_tool("tool", {"limit": value})
            received.append(_received(result.is_error, result.content[0].text))
    return Served(schema, received)


async def _fastmcp(tool: Callable[..., str], lenient_parameters: bool, values: list[Any]) -> Served:
    fastmcp = require("fastmcp")
    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    server = fastmcp.FastMCP("one-verdict", middleware=[LenientMiddleware(lenient_parameters=lenient_parameters)])
    server.tool(tool, name="tool")
    async with fastmcp.Client(server) as client:
        schema = dict((await client.list_tools())[0].input_schema)
        received = []
        for value in values:
            result = await client.call_tool("tool", {"limit": value}, raise_on_error=False)
            received.append(_received(result.is_error, result.content[0].text))
    return Served(schema, received)


def _server(
    run: Callable[[Callable[..., str], bool, list[Any]], Any], tool: Callable[..., str], lenient_parameters: bool
) -> Callable[[list[Any]], Served]:
    def serve(values: list[Any]) -> Served:
        served: Served = asyncio.run(asyncio.wait_for(run(tool, lenient_parameters, values), timeout=60))
        return served

    return serve


WAYS = [
    Way("hand-written, bound outside the Optional", _in_process(_HandWrittenOutside), HAND_WRITTEN_NULL),
    Way("hand-written, bound inside the Optional", _in_process(_HandWrittenInside), HAND_WRITTEN_NULL),
    Way("Lenient[...]", _in_process(_LenientSpelled)),
    Way("lenient_model", _in_process(lenient_model(_Plain))),
    Way("lenient_tool", _in_process(model_from_function(lenient_tool(_limit)))),
    Way("make_lenient, lenient_parameters", _server(_official, _limit, True)),
    Way("make_lenient, hand-written types", _server(_official, _limit_hand_written, False), HAND_WRITTEN_NULL),
    Way("LenientMiddleware, lenient_parameters", _server(_fastmcp, _limit, True)),
    Way("LenientMiddleware, hand-written types", _server(_fastmcp, _limit_hand_written, False), HAND_WRITTEN_NULL),
    # The proxy's, repair's and RepairingClient's rows (the schema-driven ways) go here: each is a
    # `Way` whose `serve` sends the values through it and reports what the tool received.
]


@pytest.mark.parametrize("way", [pytest.param(way, id=way.name) for way in WAYS])
def test_one_intent_gets_one_verdict_through_every_way_in(way: Way) -> None:
    names = list(VERDICTS)
    served = way.serve([VERDICTS[name][0] for name in names])
    host = host_validator(served.schema)
    wrong = []
    for name, received in zip(names, served.received, strict=True):
        value, expected = VERDICTS[name]
        expected = way.exceptions.get(name, expected)
        host_accepts = host.is_valid({"limit": value})
        if received != expected or host_accepts != (expected is not REFUSED):
            shown = "refused" if received is REFUSED else repr(received)
            wrong.append(f"{name} ({value!r}): server {shown}, host {'accepts' if host_accepts else 'refuses'}")
    assert not wrong, (way.name, wrong, served.schema)


def test_the_exceptions_are_only_the_documented_one() -> None:
    """Only a hand-written ``Optional[LenientInt]`` departs from the one verdict, only on ``"null"``."""
    for way in WAYS:
        assert way.exceptions in ({}, HAND_WRITTEN_NULL), way.name
        assert way.exceptions == HAND_WRITTEN_NULL or "hand-written" not in way.name, way.name
