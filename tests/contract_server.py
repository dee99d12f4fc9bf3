"""An MCP server with one tool per lenient type, required and Optional, for the end-to-end tests.

    python tests/contract_server.py official|fastmcp [type-array|any-of|strict]

Each tool takes one parameter, ``value``, and returns the value it received as JSON text, so a
client can compare what came through the SDK with what ``model_validate`` makes of the same call.
Every scalar inside a structured type is lenient too: FastMCP runs with ``strict_input_validation``,
under which a plain ``int`` inside ``T`` is strict, as pydantic decides.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

from pydantic import BaseModel
from pydantic_core import to_json

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic_lenient import AcceptJsonText, JsonText, LenientInt, LenientJson, LenientUInt, Style
from tests.contract import SCALAR_TYPES


class Step(BaseModel):
    action: str
    limit: LenientUInt = 1


JSON_TYPES: dict[str, Any] = {
    "LenientJson[list[str]]": LenientJson[list[str]],
    "LenientJson[list[Any]]": LenientJson[list[Any]],
    "LenientJson[dict[str, str]]": LenientJson[dict[str, str]],
    "LenientJson[list[Step]]": LenientJson[list[Step]],
    "AcceptJsonText(max_length=20)": Annotated[list[LenientInt], AcceptJsonText(max_length=20)],
    "AcceptJsonText(max_depth=3)": Annotated[list[Any], AcceptJsonText(max_depth=3)],
    "JsonText": JsonText,
    "JsonText[list[LenientUInt]]": JsonText[list[LenientUInt]],
}
TOOL_TYPES: dict[str, Any] = {**{name: annotation for name, (annotation, _) in SCALAR_TYPES.items()}, **JSON_TYPES}


def tool_name(type_name: str, optional: bool) -> str:
    """A valid MCP tool name for a type (names allow only letters, digits, ``_``, ``-`` and ``.``)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", type_name) + ("-optional" if optional else "")


def tool_functions() -> dict[str, tuple[Callable[..., str], Any]]:
    """Every tool function by name, with the annotation of its ``value`` parameter."""
    tools: dict[str, tuple[Callable[..., str], Any]] = {}
    for type_name, annotation in TOOL_TYPES.items():
        for optional in (False, True):
            name = tool_name(type_name, optional)
            parameter = Optional[annotation] if optional else annotation

            def echo(value: Any = None) -> str:
                return to_json(value).decode()

            echo.__name__ = name.replace("-", "_").replace(".", "_")
            echo.__annotations__ = {"value": parameter, "return": str}
            echo.__defaults__ = (None,) if optional else ()
            tools[name] = (echo, parameter)
    return tools


def build_official(style: Style = "type-array", *, adapter: bool = True) -> Any:
    from mcp.server.mcpserver import MCPServer

    from pydantic_lenient.adapters.mcp import make_lenient

    server = MCPServer("contract")
    for name, (function, _) in tool_functions().items():
        server.tool(name=name)(function)
    return make_lenient(server, style=style) if adapter else server


def build_fastmcp(style: Style = "type-array", *, middleware: bool = True) -> Any:
    from fastmcp import FastMCP

    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    server = FastMCP(
        "contract", middleware=[LenientMiddleware(style=style)] if middleware else [], strict_input_validation=True
    )
    for name, (function, _) in tool_functions().items():
        server.tool(function, name=name)
    return server


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)  # refused calls are the point here, not news for stderr
    sdk, style = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "type-array"
    if sdk == "official":
        build_official(style).run("stdio")  # type: ignore[arg-type]
    else:
        build_fastmcp(style).run("stdio", show_banner=False)  # type: ignore[arg-type]
