"""The mail tools on the official MCP Python SDK, over stdio: ``python examples/mcp_server.py``.

`make_lenient` advertises the lenient schemas in a style (``--style portable|type-array|any-of|strict``),
hands lenient parameters their values as sent (the SDK's pre-parse would rewrite ``"null"`` and
JSON text first), and normalizes arguments with examples/mail_rules.json first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mail_tools import TOOLS  # noqa: E402

from pydantic_lenient import STYLES, Normalizer, Style  # noqa: E402
from pydantic_lenient.adapters.mcp import make_lenient  # noqa: E402


def build_server(style: Style = "portable") -> MCPServer:
    server = MCPServer("mail")
    for tool in TOOLS:
        server.tool()(tool)
    return make_lenient(server, normalizer=Normalizer.from_file(HERE / "mail_rules.json"), style=style)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The mail tools over stdio, on the official MCP SDK.")
    parser.add_argument("--style", choices=STYLES, default="portable")
    build_server(parser.parse_args().style).run("stdio")
