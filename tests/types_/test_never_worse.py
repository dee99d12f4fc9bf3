"""A way in never makes a tool worse than plain (issue 36, item 9): where the mapping cannot rebuild a
part faithfully (``Json[...]``, a discriminated union with integer tags, ``Field(strict=True)``, a
model whose ``before`` validator takes a string), it leaves that part exactly as written and says
why, and the rest stays lenient. Every value the plain annotation takes, the lenient one takes with
the same result; and both SDK adapters list and call such tools as plain servers do."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Discriminator, Field, Json, TypeAdapter, ValidationError, model_validator

from pydantic_lenient import lenient_form, render_annotation
from tests.sdks import require
from tests.strategies import json_values


class One(BaseModel):
    kind: Literal[1]
    x: int


class Two(BaseModel):
    kind: Literal[2]
    y: int


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Color(BaseModel):
    red: int = 0
    green: int = 0

    @model_validator(mode="before")
    @classmethod
    def named(cls, value: Any) -> Any:
        return {"red": 255} if value == "red" else value


class Wrapped(BaseModel):
    n: int = 0

    @model_validator(mode="wrap")
    @classmethod
    def from_text(cls, value: Any, handler: Any) -> Any:
        return handler({"n": len(value)} if isinstance(value, str) else value)


IntTagged = Annotated[Union[One, Two], Field(discriminator="kind")]
IntTaggedMarker = Annotated[Union[One, Two], Discriminator("kind")]
StrTagged = Annotated[Union[Cat, Dog], Field(discriminator="kind")]
StrictInt = Annotated[int, Field(strict=True)]

# The parts the mapping must keep as written, and a reason that names what it is.
KEPT = [
    (Json[list[int]], "Json[...]"),
    (Json[dict[str, int]], "Json[...]"),
    (IntTagged, "discriminated union"),
    (IntTaggedMarker, "discriminated union"),
    (StrictInt, "strict=True"),
    (Annotated[float, Field(strict=True, ge=0)], "strict=True"),
    (Color, "Color has a model validator"),
    (Wrapped, "Wrapped has a model validator"),
]
LEAVES: list[Any] = [
    *(annotation for annotation, _ in KEPT),
    int,
    bool,
    float,
    str,
    StrTagged,
    Annotated[int, Field(ge=1, le=9)],
    Literal[1, 2],
]
# Values around the leaves: what they take as written, and what a lenient form might read differently.
SPECIAL_VALUES = st.sampled_from(
    [
        "red",
        "blue",
        {"red": 3},
        "[1, 2]",
        '{"a": 1}',
        "[1,",
        {"kind": 1, "x": 5},
        {"kind": 2, "y": "6"},
        {"kind": "1", "x": 5},
        {"kind": "cat", "lives": "9"},
        {"kind": "dog", "good": "true"},
        '{"kind": 1, "x": 5}',
        5,
        "5",
        5.0,
        True,
        "true",
        None,
        "null",
        {"n": 3},
    ]
)


def _around(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        leaf,
        st.builds(lambda inner: list[inner], leaf),  # type: ignore[valid-type]
        st.builds(lambda inner: Optional[inner], leaf),
        st.builds(lambda inner: dict[str, inner], leaf),  # type: ignore[valid-type]
    )


annotation_shapes = st.recursive(st.sampled_from(LEAVES), _around, max_leaves=3)
values = st.recursive(
    st.one_of(SPECIAL_VALUES, json_values),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b"]), inner)),
    max_leaves=4,
)


def _verdict(adapter: TypeAdapter[Any], text: str, *, strict: bool) -> Any:
    try:
        return TypeAdapter(Any).dump_python(adapter.validate_json(text, strict=strict))
    except ValidationError:
        return ValidationError


@pytest.mark.parametrize(("annotation", "named"), KEPT, ids=[render_annotation(kept) for kept, _ in KEPT])
def test_what_cannot_be_rebuilt_is_kept_as_written_with_its_reason(annotation: Any, named: str) -> None:
    form = lenient_form(annotation)
    assert form.annotation is annotation
    assert len(form.kept) == 1
    assert named in form.kept[0].reason
    # Inside a structure, only that part is kept: the rest is lenient.
    form = lenient_form(dict[str, tuple[annotation, int]])
    assert [kept.annotation for kept in form.kept] == [annotation]


def test_the_rest_of_a_structure_stays_lenient() -> None:
    form = lenient_form(dict[str, tuple[StrictInt, int]])
    adapter = TypeAdapter(form.annotation)
    assert adapter.validate_python({"a": [1, "7"]}) == {"a": (1, 7)}
    with pytest.raises(ValidationError):
        adapter.validate_python({"a": ["1", 7]})  # the strict part stays strict
    assert [kept.annotation for kept in form.kept] == [StrictInt]
    # A string-tagged union is rebuilt (its tags stay Literal strings), and its members are lenient.
    assert TypeAdapter(lenient_form(StrTagged).annotation).validate_python({"kind": "cat", "lives": "9"}).lives == 9


@settings(max_examples=300, deadline=None)
@given(annotation=annotation_shapes, value=values)
def test_never_worse_than_plain(annotation: Any, value: Any) -> None:
    """For every annotation, the lenient form builds, and every JSON value the plain annotation takes
    (as strictly as a host's schema would have it, and in lax mode where the plain one is strict
    anyway) the lenient one takes with the same result."""
    lenient = TypeAdapter(lenient_form(annotation).annotation)
    lenient.json_schema()
    plain = TypeAdapter(annotation)
    text = json.dumps(value)
    expected = _verdict(plain, text, strict=True)
    if expected is not ValidationError and not _boolean_read_as_number(value, expected):
        assert _verdict(lenient, text, strict=False) == expected


def _boolean_read_as_number(value: Any, result: Any) -> bool:
    """Whether the plain annotation read a JSON boolean as something else (pydantic's ``Literal[1]``
    takes ``true``, as ``True == 1``): a meaning the contract refuses on every way in."""
    if isinstance(value, bool):
        return not isinstance(result, bool)
    if isinstance(value, list) and isinstance(result, (list, tuple)) and len(value) == len(result):
        return any(_boolean_read_as_number(item, got) for item, got in zip(value, result, strict=True))
    if isinstance(value, dict) and isinstance(result, dict):
        return any(_boolean_read_as_number(item, result[key]) for key, item in value.items() if key in result)
    return False


# ---- through the SDK adapters: listing never fails, and each tool decides as plain does


def _json_numbers(numbers: Json[list[int]]) -> str:
    return json.dumps(numbers)


def _tagged(shape: IntTagged) -> str:
    return shape.model_dump_json()


def _strict(n: StrictInt, m: int = 0) -> str:
    return json.dumps([n, m])


def _colored(color: Color) -> str:
    return color.model_dump_json()


TOOLS = [_json_numbers, _tagged, _strict, _colored]
CALLS = [
    ("_json_numbers", {"numbers": "[1, 2]"}),
    ("_json_numbers", {"numbers": "[1,"}),
    ("_tagged", {"shape": {"kind": 2, "y": 6}}),
    ("_tagged", {"shape": {"kind": "2", "y": 6}}),
    ("_strict", {"n": 3}),
    ("_strict", {"n": "3"}),
    ("_colored", {"color": "red"}),
    ("_colored", {"color": {"red": 1}}),
]


async def _official(lenient_parameters: bool) -> tuple[list[str], list[Any]]:
    mcp = require("mcp")
    from mcp.server.mcpserver import MCPServer

    from pydantic_lenient.adapters.mcp import make_lenient

    server: Any = make_lenient(MCPServer("never-worse"), lenient_parameters=lenient_parameters)
    for tool in TOOLS:
        server.tool()(tool)
    async with mcp.Client(server) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        received = []
        for name, arguments in CALLS:
            result = await client.call_tool(name, arguments)
            received.append(None if result.is_error else result.content[0].text)
    return names, received


async def _fastmcp(lenient_parameters: bool) -> tuple[list[str], list[Any]]:
    fastmcp = require("fastmcp")
    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    server = fastmcp.FastMCP("never-worse", middleware=[LenientMiddleware(lenient_parameters=lenient_parameters)])
    for tool in TOOLS:
        server.tool(tool)
    async with fastmcp.Client(server) as client:
        names = sorted(tool.name for tool in await client.list_tools())
        received = []
        for name, arguments in CALLS:
            result = await client.call_tool(name, arguments, raise_on_error=False)
            received.append(None if result.is_error else result.content[0].text)
    return names, received


@pytest.mark.parametrize("serve", [pytest.param(_official, id="official-sdk"), pytest.param(_fastmcp, id="fastmcp")])
def test_the_adapters_list_every_tool_and_call_it_as_plain(serve: Any) -> None:
    plain = asyncio.run(asyncio.wait_for(serve(False), timeout=60))
    lenient = asyncio.run(asyncio.wait_for(serve(True), timeout=60))
    assert lenient[0] == plain[0] == sorted(tool.__name__ for tool in TOOLS)
    for (name, arguments), before, after in zip(CALLS, plain[1], lenient[1], strict=True):
        if before is not None:  # what plain takes, lenient takes with the same result
            assert after == before, (name, arguments)
        elif name != "_strict":  # the parts kept as written refuse what plain refuses
            assert after is None, (name, arguments)
    # The plain verdicts, as a reminder of what the kept parts mean.
    assert plain[1][0] == "[1, 2]"
    assert plain[1][1] is None
    assert plain[1][6] == '{"red":255,"green":0}'


@pytest.mark.parametrize("serve", [pytest.param(_official, id="official-sdk"), pytest.param(_fastmcp, id="fastmcp")])
def test_a_tool_whose_lenient_form_does_not_build_stays_plain(serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the mapping misses, the listing holds every tool: one whose lenient form does not
    build is served as written (and a warning names it)."""
    require("mcp" if serve is _official else "fastmcp")
    from pydantic_lenient.adapters import fastmcp as fastmcp_adapter
    from pydantic_lenient.adapters import mcp as mcp_adapter

    def refused(_: Any) -> Any:
        raise TypeError("no lenient form")

    monkeypatch.setattr(mcp_adapter, "lenient_model", refused)
    monkeypatch.setattr(fastmcp_adapter, "lenient_tool", refused)
    plain = asyncio.run(asyncio.wait_for(serve(False), timeout=60))
    assert asyncio.run(asyncio.wait_for(serve(True), timeout=60)) == plain
