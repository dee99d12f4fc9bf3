"""The host matrix (issue 33): every host profile by every shape by every tool by every intended value.

A tool is one parameter, ``value``, from the real signatures (tests/real_signatures.py) or from the
annotation shapes people write (`SHAPES_PEOPLE_WRITE`). It is served six ways: plainly, with no
library (the baseline: pydantic's own schema and lax validation, as FastMCP serves it); through
`lenient_tool` in each style (``type-array``, ``any-of``, ``strict``, ``portable``), as a way in that
knows the client serves it (`make_lenient`, `LenientMiddleware`, the proxy), which reads a host's
writing of "left out" back (`HostProfile.as_meant`); and ``hand-written``: the parameter annotated
``Lenient[...]`` in the tool itself and listed by pydantic's own ``model_json_schema()``, as an SDK
with no adapter serves it.

For each intended value the model emits one of the forms models really write (the native value,
digit strings, ``"false"``, JSON text, ``null`` and ``"null"``, a value out of range, and an unset
optional, which Cursor sends as ``""``). The host lists the tool (or not) and turns the call into
what the server receives (or refuses it); the server then validates. The verdict:

* ``right``: the server got the intended value, or a value that must be refused was refused;
* ``refused``: an intended value was refused, by the host or the server, with an error;
* ``wrong``: the server got another value (VS Code's ``null`` → ``0``), or accepted one it must refuse;
* ``unlisted``: the host does not list the tool, so nothing can be called.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from pydantic_lenient import input_schema, lenient_tool
from pydantic_lenient.hosts import PROFILES, HostProfile
from pydantic_lenient.schema.catalog import model_from_function
from tests.real_signatures import SIGNATURES

SHAPES = ("plain", "type-array", "any-of", "strict", "portable", "hand-written")
STYLED = ("type-array", "any-of", "strict", "portable")
"""The shapes a way in that knows the client writes."""
VERDICTS = ("right", "refused", "wrong", "unlisted")

SHAPES_PEOPLE_WRITE: tuple[str, ...] = (
    "int",
    "Optional[int] = None",
    "float",
    "Optional[float] = None",
    "bool = False",
    "Optional[bool] = None",
    "str",
    "Optional[str] = None",
    "Annotated[int, Field(ge=0, le=10)] = 5",
    "Literal['fast', 'slow'] = 'fast'",
    "Optional[Literal['fast', 'slow']] = None",
    "Literal[1, 2, 3] = 1",
    "Color = Color.RED",
    "Optional[Color] = None",
    "Priority = Priority.LOW",
    "list[int]",
    "list[str] | None = None",
    "list[Optional[int]] | None = None",
    "dict[str, int] | None = None",
    "tuple[int, int]",
    "Point",
    "Optional[Point] = None",
    "list[Point] | None = None",
    "date | None = None",
)

HEADER = """\
import enum
from datetime import date
from typing import Annotated, Literal, Optional

from pydantic import BaseModel, Field

from pydantic_lenient import Lenient


class Color(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 5


class Point(BaseModel):
    x: int
    y: int
"""


class Tool(NamedTuple):
    name: str
    written: str
    plain: type[BaseModel]
    lenient: type[BaseModel]
    hand_written: type[BaseModel]


class Case(NamedTuple):
    form: str
    """What the model emits: ``native``, ``digits``, ``"false"``, ``JSON text``, ``null``, ``"null"``,
    ``out of range``, ``unset``."""
    arguments: dict[str, Any]
    expected: Any
    """The value the server must receive (JSON form), or `REFUSE`."""


class Cell(NamedTuple):
    host: str
    shape: str
    tool: str
    form: str
    verdict: str
    detail: str


REFUSE = object()
_MODULES = itertools.count()


def import_source(directory: Path, source: str) -> Any:
    """``source`` as a module imported from a file, never ``exec``."""
    name = f"_host_matrix_{next(_MODULES)}"
    path = directory / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def tools(directory: Path) -> list[Tool]:
    """Every tool of the table: the real signatures, then the shapes people write."""
    rows = [(f"{row.tool}.{row.parameter}", row.written) for row in SIGNATURES]
    rows += [(f"shape.{written.partition(' =')[0]}", written) for written in SHAPES_PEOPLE_WRITE]
    functions = "\n\n".join(
        f'def tool_{index}(value: {written}) -> str:\n    """A tool."""\n    return "done"\n\n\n'
        f'def hand_written_{index}(value: {_lenient(written)}) -> str:\n    """A tool."""\n    return "done"\n'
        for index, (_, written) in enumerate(rows)
    )
    module = import_source(directory, f"{HEADER}\n\n{functions}")
    built = []
    for index, (name, written) in enumerate(rows):
        function = getattr(module, f"tool_{index}")
        built.append(
            Tool(
                name,
                written,
                model_from_function(function),
                model_from_function(lenient_tool(function)),
                model_from_function(getattr(module, f"hand_written_{index}")),
            )
        )
    return built


def _lenient(written: str) -> str:
    """``written`` (an annotation and its default) with the annotation as ``Lenient[...]``."""
    annotation, equals, default = written.partition(" = ")
    return f"Lenient[{annotation}]{equals}{default}"


def schema_of(tool: Tool, shape: str) -> dict[str, Any]:
    if shape == "plain":
        return tool.plain.model_json_schema()
    if shape == "hand-written":
        return tool.hand_written.model_json_schema()
    return input_schema(tool.lenient, style=shape)  # type: ignore[arg-type]


def _resolve(schema: Any, root: dict[str, Any]) -> Any:
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        node: Any = root
        for part in schema["$ref"][2:].split("/"):
            node = node[part]
        schema = node
    return schema


def _branches(schema: dict[str, Any], root: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """The non-null alternatives of a property, and whether it admits null."""
    schema = _resolve(schema, root)
    members = schema.get("anyOf")
    if not isinstance(members, list):
        return [schema], False
    resolved = [_resolve(member, root) for member in members]
    others = [member for member in resolved if member.get("type") != "null"]
    return others, len(others) < len(resolved)


def _native(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """An ordinary value the schema admits (None when the table cannot make one)."""
    schema = _resolve(schema, root)
    if "enum" in schema:
        return schema["enum"][-1]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        others, _ = _branches(schema, root)
        return _native(others[0], root) if others else None
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1), schema.get("maximum")
        return max(low, min(7, high if high is not None else 7))
    if kind == "number":
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = schema.get("maximum", 1000)
        return min(max(low + 0.5, 2.5), high)
    if kind == "boolean":
        return False
    if kind == "string":
        if schema.get("format") == "date":
            return "2026-05-01"
        return "abc"[: schema.get("maxLength", 3)] if schema.get("minLength", 0) <= 3 else "a" * schema["minLength"]
    if kind == "array":
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            return [_native(item, root) for item in prefix]
        return [_native(schema.get("items", {"type": "string"}), root)] * 2
    if kind == "object":
        properties = schema.get("properties")
        if isinstance(properties, dict):
            return {name: _native(sub, root) for name, sub in properties.items()}
        return {"k": _native(schema.get("additionalProperties") or {"type": "integer"}, root)}
    return None


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(to_jsonable_python(value)))


def cases(tool: Tool) -> list[Case]:
    """The intended values of the tool's parameter, in the forms models emit."""
    root = tool.plain.model_json_schema()
    prop = root["properties"]["value"]
    required = "value" in root.get("required", [])
    others, nullable = _branches(prop, root)
    native = _native(others[0], root)
    found: list[Case] = []
    if native is not None:
        expected = _jsonable(tool.plain.model_validate({"value": native}).value)  # type: ignore[attr-defined]
        found.append(Case("native", {"value": native}, expected))
        if isinstance(native, bool):
            found.append(Case('"false"', {"value": json.dumps(native)}, expected))
        elif isinstance(native, (int, float)):
            found.append(Case("digits", {"value": json.dumps(native)}, expected))
        elif isinstance(native, (list, dict)):
            found.append(Case("JSON text", {"value": json.dumps(native)}, expected))
    base = _resolve(others[0], root) if others else {}
    textual = base.get("type") == "string" or len(others) > 1
    if nullable:
        found.append(Case("null", {"value": None}, None))
        if not textual:  # "null" for a text parameter is the text: ambiguous by the contract
            found.append(Case('"null"', {"value": "null"}, None))
    if not required:
        default = _jsonable(tool.plain.model_validate({}).value)  # type: ignore[attr-defined]
        found.append(Case("unset", {}, default))
    high = base.get("maximum")
    if base.get("type") in ("integer", "number") and isinstance(high, (int, float)):
        past = high + 1
        found.append(Case("out of range", {"value": past}, REFUSE))
        found.append(Case("out of range, digits", {"value": json.dumps(past)}, REFUSE))
    return found


def _server(tool: Tool, shape: str) -> type[BaseModel]:
    return {"plain": tool.plain, "hand-written": tool.hand_written}.get(shape, tool.lenient)


def verdict(host: HostProfile, tool: Tool, shape: str, schema: dict[str, Any], case: Case) -> tuple[str, str]:
    listing = host.listing(schema)
    if not listing.accepted:
        return "unlisted", "; ".join(listing.reasons)
    call = host.call(listing, case.arguments)
    if call.arguments is None:
        return ("right" if case.expected is REFUSE else "refused"), f"host: {call.refusal}"
    received = host.as_meant(schema, call.arguments) if shape in STYLED else call.arguments
    try:
        delivered = _server(tool, shape).model_validate(received).value  # type: ignore[attr-defined]
    except ValidationError as error:
        return ("right" if case.expected is REFUSE else "refused"), f"server: {error.errors()[0]['msg']}"
    got = _jsonable(delivered)
    if case.expected is not REFUSE and _same(got, case.expected):
        return "right", ""
    return "wrong", f"sent {received.get('value', '<unset>')!r}, server got {got!r}"


def _same(left: Any, right: Any) -> bool:
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left) and math.isnan(right):
        return True
    numbers = all(isinstance(side, (int, float)) and not isinstance(side, bool) for side in (left, right))
    return bool(left == right) and (numbers or type(left) is type(right))


def run(
    directory: Path,
    hosts: Callable[[], Iterator[HostProfile]] = lambda: iter(PROFILES.values()),
    shapes: tuple[str, ...] = SHAPES,
) -> list[Cell]:
    cells: list[Cell] = []
    for tool in tools(directory):
        tool_cases = cases(tool)
        for shape in shapes:
            schema = schema_of(tool, shape)
            for host in hosts():
                for case in tool_cases:
                    result, detail = verdict(host, tool, shape, schema, case)
                    cells.append(Cell(host.name, shape, tool.name, case.form, result, detail))
    return cells


def figures(cells: list[Cell]) -> dict[tuple[str, str], Counter[str]]:
    """Per host and shape: the count of each verdict, and ``listed``/``tools`` for the listings."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    unlisted_tools: dict[tuple[str, str], set[str]] = {}
    all_tools: dict[tuple[str, str], set[str]] = {}
    for cell in cells:
        key = (cell.host, cell.shape)
        counts.setdefault(key, Counter())[cell.verdict] += 1
        all_tools.setdefault(key, set()).add(cell.tool)
        if cell.verdict == "unlisted":
            unlisted_tools.setdefault(key, set()).add(cell.tool)
    for key, counter in counts.items():
        counter["tools"] = len(all_tools[key])
        counter["listed"] = len(all_tools[key]) - len(unlisted_tools.get(key, set()))
    return counts


def table(cells: list[Cell]) -> str:
    """The figures as a Markdown table: listed tools, then right / refused / wrong cases."""
    counts = figures(cells)
    hosts = list(dict.fromkeys(cell.host for cell in cells))
    shapes = list(dict.fromkeys(cell.shape for cell in cells))
    lines = ["| host | " + " | ".join(shapes) + " |", "|---" * (len(shapes) + 1) + "|"]
    for host in hosts:
        row = []
        for shape in shapes:
            c = counts[(host, shape)]
            row.append(
                f"{c['listed']}/{c['tools']} listed; {c['right']} right, {c['refused']} refused, {c['wrong']} wrong"
            )
        lines.append(f"| {host} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def admits_text(tool: Tool) -> bool:
    """Whether the parameter's non-null part takes a string as itself (``str``, ``int | str``, ...)."""
    root = tool.plain.model_json_schema()
    others, _ = _branches(root["properties"]["value"], root)
    return any(_resolve(branch, root).get("type") == "string" for branch in others) and not all(
        "enum" in _resolve(branch, root) or "format" in _resolve(branch, root) for branch in others
    )


class Exception_(NamedTuple):
    reason: str
    applies: Callable[[Cell, Tool], bool]


EXCEPTIONS: tuple[Exception_, ...] = (
    Exception_(
        'ambiguous by the contract: Cursor sends an unset optional text parameter as "" (cursor/cursor#3614),'
        " which is a string like any other",
        lambda cell, tool: cell.host == "cursor" and cell.form == "unset" and admits_text(tool),
    ),
    Exception_(
        'ambiguous by the contract: Claude Code forwards null behind anyOf as the text "null"'
        ' (claude-code#18260), and a text parameter takes "null" as itself',
        lambda cell, tool: cell.host == "claude-code" and cell.form == "null" and admits_text(tool),
    ),
    Exception_(
        'ambiguous by the contract: for a union with a text member (int | str), the digit text "7" is that'
        " text; Claude Code writes even the native 7 as text behind anyOf",
        lambda cell, tool: (
            admits_text(tool)
            and tool.written.startswith("int | str")
            and (cell.form == "digits" or (cell.host == "claude-code" and cell.form == "native"))
        ),
    ),
)


def excused(cell: Cell, tool: Tool) -> str | None:
    """The listed reason a cell may be other than right, or None."""
    for exception in EXCEPTIONS:
        if exception.applies(cell, tool):
            return exception.reason
    return None
