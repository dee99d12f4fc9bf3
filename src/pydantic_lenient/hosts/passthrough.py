"""The hosts that list every tool and send the arguments as written: the MCP Inspector and the SDK clients.

Sources:

* modelcontextprotocol/inspector ``client/src/utils/schemaUtils.ts``: Ajv is compiled only for a
  tool's ``outputSchema``; the input form is built from the schema (``normalizeUnionType``) but the
  call's arguments are not validated. ``clientInfo.name``: ``mcp-inspector``.
* modelcontextprotocol/typescript-sdk ``src/client/index.ts`` (``Client.callTool``) and
  modelcontextprotocol/python-sdk ``src/mcp/client/session.py`` (``ClientSession.call_tool``): the
  arguments are sent as given; only structured output is validated. The Python SDK's default
  ``clientInfo.name`` is ``mcp``; a TypeScript client names itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from .profile import HostProfile

__all__ = ("INSPECTOR", "SDK_CLIENTS", "Passthrough")


@dataclass(frozen=True)
class Passthrough(HostProfile):
    """Lists every tool; sends the arguments unchanged and unchecked (the base profile's behaviour)."""


INSPECTOR = Passthrough(
    name="inspector",
    title="MCP Inspector",
    client_names=("mcp-inspector",),
    sources=("modelcontextprotocol/inspector client/src/utils/schemaUtils.ts",),
)
SDK_CLIENTS = Passthrough(
    name="sdk",
    title="The official SDK clients (TypeScript, Python)",
    client_names=("mcp",),
    sources=(
        "modelcontextprotocol/typescript-sdk src/client/index.ts",
        "modelcontextprotocol/python-sdk src/mcp/client/session.py",
    ),
)
