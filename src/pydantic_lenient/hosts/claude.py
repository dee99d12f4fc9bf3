"""Claude Code and Claude Desktop / claude.ai connectors.

Sources:

* The Anthropic API refuses ``oneOf``, ``allOf`` and ``anyOf`` at the top level of a tool's
  ``input_schema`` (Anthropic's tool-use documentation; anthropics/claude-code#73137).
* Claude Code: the model writes each parameter as text, and Claude Code converts it by the
  property's top-level ``type``. The reports disagree on what happens without one:
  anthropics/claude-code#18260 and #73137 (and Teamwork/mcp#383) show values behind ``anyOf``,
  ``oneOf`` or ``$ref`` arriving as strings (``"5"``, ``"false"``, ``'["a"]'``), while the
  maintainers' reproduction in anthropics/claude-code#82652 shows them parsed as JSON. Both are
  modelled: `CLAUDE_CODE` forwards the text, `CLAUDE_CODE_PARSED` parses it when it is JSON.
  Claude Code does not validate arguments itself.
* Claude Desktop and claude.ai send the model's JSON arguments unchanged, without validation.
* ``clientInfo.name``: ``claude-code`` for Claude Code, ``claude-ai`` for Claude Desktop and
  claude.ai connectors (as servers log them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .profile import Call, HostProfile, property_schemas

__all__ = ("CLAUDE_CODE", "CLAUDE_CODE_PARSED", "CLAUDE_DESKTOP", "ClaudeApp", "ClaudeCode", "anthropic_refusals")

_COMBINATORS = ("anyOf", "oneOf", "allOf")


def anthropic_refusals(schema: dict[str, Any]) -> list[str]:
    return [f"input_schema: {key} at the top level" for key in _COMBINATORS if key in schema]


def _as_text(value: Any) -> str:
    """The text the model writes for a parameter's value."""
    return value if isinstance(value, str) else json.dumps(value)


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class ClaudeApp(HostProfile):
    def refusals(self, schema: dict[str, Any]) -> list[str]:
        return anthropic_refusals(schema)


@dataclass(frozen=True)
class ClaudeCode(ClaudeApp):
    parses_untyped: bool = False
    """#82652's behaviour: a value whose property has no single top-level ``type`` is parsed as JSON."""

    def transform(self, schema: dict[str, Any], arguments: dict[str, Any]) -> Call:
        properties = property_schemas(schema)
        sent: dict[str, Any] = {}
        for name, value in arguments.items():
            text = _as_text(value)
            sub = properties.get(name)
            kind = sub.get("type") if isinstance(sub, dict) else None
            if kind == "string":
                sent[name] = text
            elif isinstance(kind, str):
                sent[name] = _parsed(text)
            else:
                sent[name] = _parsed(text) if self.parses_untyped else text
        return Call(sent)


_SOURCES = ("anthropics/claude-code#18260", "anthropics/claude-code#73137", "Teamwork/mcp#383")
CLAUDE_CODE = ClaudeCode(
    name="claude-code",
    title="Claude Code (values behind anyOf/$ref forwarded as text: #18260, #73137)",
    client_names=("claude-code",),
    sources=_SOURCES,
)
CLAUDE_CODE_PARSED = ClaudeCode(
    name="claude-code+parsed",
    title="Claude Code (values behind anyOf/$ref parsed as JSON: #82652)",
    client_names=(),
    sources=(*_SOURCES, "anthropics/claude-code#82652"),
    parses_untyped=True,
)
CLAUDE_DESKTOP = ClaudeApp(
    name="claude-desktop",
    title="Claude Desktop and claude.ai connectors",
    client_names=("claude-ai",),
    sources=("Anthropic tool use documentation: input_schema",),
)
