"""Host profiles: what each MCP host does to a tool's schema and to the arguments of a call.

Each module models one host from its own code or its issue threads, and cites them at its top.
`PROFILES` holds every profile by name; `profile_for_client` finds one by the ``clientInfo.name``
the host sends at ``initialize``. Nothing here imports pydantic: the proxy can use a profile before
pydantic loads.

>>> from pydantic_lenient.hosts import profile_for_client
>>> profile_for_client("cursor-vscode").name
'cursor'
>>> profile_for_client("qwen-cli-mcp-client-github").name
'qwen-code'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .claude import CLAUDE_CODE, CLAUDE_CODE_PARSED, CLAUDE_DESKTOP
from .codex import CODEX
from .copilot_cli import COPILOT_CLI, COPILOT_CLI_ON_GEMINI
from .cursor import CURSOR
from .gemini import GEMINI_CLI, gemini_api_refusals
from .passthrough import INSPECTOR, SDK_CLIENTS
from .profile import Call, HostProfile, Listing
from .qwen import QWEN_CODE
from .vscode import VSCODE, VSCODE_ON_GEMINI

__all__ = (
    "PROFILES",
    "Call",
    "HostProfile",
    "Listing",
    "arguments_as_meant",
    "gemini_api_refusals",
    "profile",
    "profile_for_client",
)

PROFILES: dict[str, HostProfile] = {
    host.name: host
    for host in (
        CLAUDE_CODE,
        CLAUDE_CODE_PARSED,
        CLAUDE_DESKTOP,
        CURSOR,
        VSCODE,
        VSCODE_ON_GEMINI,
        COPILOT_CLI,
        COPILOT_CLI_ON_GEMINI,
        GEMINI_CLI,
        CODEX,
        QWEN_CODE,
        INSPECTOR,
        SDK_CLIENTS,
    )
}
"""Every profiled host, by name. A ``+`` names a variant: the host on a Gemini model, or Claude
Code as a disagreeing report describes it."""

# Clients that put a suffix after their name (Qwen Code adds the server's name).
_PREFIXED = {"qwen-cli-mcp-client-": QWEN_CODE}


def profile(name: str) -> HostProfile:
    """The profile named ``name`` (`PROFILES`); `KeyError` names the known hosts otherwise."""
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown host {name!r}; known: {', '.join(PROFILES)}") from None


def profile_for_client(client_name: str) -> HostProfile | None:
    """The profile of the host that sends ``client_name`` as ``clientInfo.name``; None if unknown."""
    for host in PROFILES.values():
        if client_name in host.client_names:
            return host
    for prefix, host in _PREFIXED.items():
        if client_name.startswith(prefix):
            return host
    return None


def arguments_as_meant(client_name: str | None, schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` of a call to the tool listed as ``schema``, sent by the client named
    ``client_name``, as its model meant them (`HostProfile.as_meant`): Cursor's ``""`` for a
    parameter the model left out is left out again. The same dict when nothing changes, or the
    client is unknown."""
    host = profile_for_client(client_name) if client_name else None
    return arguments if host is None else host.as_meant(schema, arguments)
