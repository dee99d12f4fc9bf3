"""The mail tools on the official MCP Python SDK, over stdio: ``python examples/mcp_server.py``.

`make_lenient` advertises the flattened lenient schemas, stops the SDK's pre-parse from rewriting
strings a field accepts, and normalizes arguments with examples/mail_rules.json first.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mail_tools import TOOLS  # noqa: E402

from pydantic_lenient import Normalizer  # noqa: E402
from pydantic_lenient.mcp_adapter import make_lenient  # noqa: E402


def build_server() -> MCPServer:
    server = MCPServer("mail")
    for tool in TOOLS:
        server.tool()(tool)
    return make_lenient(server, normalizer=Normalizer.from_file(HERE / "mail_rules.json"))


if __name__ == "__main__":
    build_server().run("stdio")
