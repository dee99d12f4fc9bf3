"""Real tool parameters from public MCP servers, as their authors wrote them (issue 23, item 2).

Each row is one parameter of a published tool: its annotation and default exactly as written
(a module-level constant replaced by its value), with the file it came from. The contract tests run
every row through every way in (tests/cross_cutting/test_real_signatures.py).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["SIGNATURES", "Signature"]

_WGER = "https://github.com/wger-project/mcp-server/blob/01fa180660caa3ccf1c0f81acb51f207d70aea11/src/wger_mcp/tools/routines.py"
_NOTION = "https://github.com/ldraney/notion-mcp/blob/main/src/notion_mcp/tools/search.py"
_MAX = "https://github.com/narumiruna/max-mcp/blob/main/src/mcp_server_max/server.py"
_TAPE = "https://github.com/ServiceNow/TapeAgents/blob/main/tapeagents/tools/mcp_servers/web_search.py"
_PATTERNS = (
    "https://github.com/coredweller/ClaudeCore/blob/main/.claude/skills/mcp-builder/reference/python-mcp-patterns.md"
)


class Signature(NamedTuple):
    tool: str
    parameter: str
    written: str
    """The annotation and its default, as the source writes them."""
    source: str
    """The file it came from."""


SIGNATURES: tuple[Signature, ...] = (
    Signature("list_routines", "limit", "Annotated[int, Field(ge=1, le=200)] = 20", _WGER),
    Signature("list_routine_days", "limit", "Annotated[int, Field(ge=1, le=200)] = 50", _WGER),
    Signature("get_workout_for_date", "workout_date", "date | None = None", _WGER),
    Signature("list_slot_entry_configs", "kinds", "list[str] | None = None", _WGER),
    Signature("create_routine", "name", "Annotated[str, Field(min_length=1, max_length=25)]", _WGER),
    Signature("create_routine", "fit_in_week", "bool = False", _WGER),
    Signature("update_routine", "name", "Annotated[str | None, Field(max_length=25)] = None", _WGER),
    Signature("update_routine", "is_public", "bool | None = None", _WGER),
    Signature("add_routine_day", "order", "Annotated[int, Field(ge=1, le=100)]", _WGER),
    Signature("add_routine_day", "name", "Annotated[str, Field(min_length=1, max_length=20)]", _WGER),
    Signature("update_routine_day", "order", "Annotated[int | None, Field(ge=1, le=100)] = None", _WGER),
    Signature("update_slot_entry", "repetition_unit", "int | str | None = None", _WGER),
    Signature("update_slot_entry", "weight_rounding", "Annotated[float | None, Field(gt=0, le=100)] = None", _WGER),
    Signature("update_slot_entry_config", "value", "float | None = None", _WGER),
    Signature("update_slot_entry_config", "iteration", "Annotated[int | None, Field(ge=1, le=1000)] = None", _WGER),
    Signature("update_slot_entry_config", "requirements", "list[str] | None = None", _WGER),
    Signature("attach_exercise_to_slot", "order", "Annotated[int, Field(ge=1, le=100)] = 1", _WGER),
    Signature(
        "attach_exercise_to_slot", "repetition_rounding", "Annotated[float | None, Field(gt=0, le=100)] = None", _WGER
    ),
    Signature(
        "search", "page_size", 'Annotated[int | None, Field(description="Number of results per page")] = None', _NOTION
    ),
    Signature(
        "search",
        "filter",
        'Annotated[str | dict | None, Field(description="JSON string or object for a filter")] = None',
        _NOTION,
    ),
    Signature(
        "search", "start_cursor", 'Annotated[str | None, Field(description="Cursor for pagination")] = None', _NOTION
    ),
    Signature("add_numbers", "a", 'Annotated[float, Field(description="The first number")]', _MAX),
    Signature("web_search_tool", "query", "str", _TAPE),
    Signature(
        "list_items",
        "limit",
        'Optional[int] = Field(default=20, description="Maximum results to return", ge=1, le=100)',
        _PATTERNS,
    ),
    Signature(
        "list_items",
        "offset",
        'Optional[int] = Field(default=0, description="Number of results to skip for pagination", ge=0)',
        _PATTERNS,
    ),
)
