"""Both adapters normalize only calls to tools their server has, and count those under their names."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pydantic_lenient import Normalizer
from pydantic_lenient.normalizer.engine import OTHER_TOOLS
from tests.adapters.test_mcp_servers import SERVERS, Call

# A wildcard rule: it would apply to any tool name a client invents, if the adapter let it through.
ANY_TOOL_COUNT = {"id": "any-count", "tools": ["*"], "type": "param_alias", "from": "count", "to": "limit"}


@pytest.mark.parametrize("serve", SERVERS)
def test_calls_to_unknown_tools_are_not_normalized_or_counted(serve: Any) -> None:
    normalizer = Normalizer([ANY_TOOL_COUNT])

    async def use(call: Call, schemas: Any) -> Any:
        invented = [await call(f"invented_{index}", {"count": 1}) for index in range(20)]
        known = await call("search", {"folder": "Dev", "count": "5"})
        return invented, known

    invented, known = asyncio.run(serve(use, normalizer=normalizer))
    assert all(is_error for is_error, _ in invented)
    assert known == (False, {"folder": "Dev", "to": None, "limit": 5, "offset": 0})
    stats = normalizer.stats()
    assert stats["total_processed"] == stats["total_normalized"] == 1
    assert stats["by_tool"] == {"search": {"processed": 1, "normalized": 1}}  # registered: its own name
    assert OTHER_TOOLS not in stats["by_rule"]["any-count"]["tools"]
