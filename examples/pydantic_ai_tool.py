"""A pydantic-ai function tool with lenient parameters.

pydantic-ai builds the tool's schema with pydantic, so the lenient types advertise their widened
form there too, and its validator takes "100" for a LenientUInt.
"""

from __future__ import annotations

from typing import Optional

from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

from pydantic_lenient import LenientUInt, StrictBoolish

agent = Agent(TestModel(), name="mail")


@agent.tool_plain
def search(folder: str, limit: Optional[LenientUInt] = None, dry_run: StrictBoolish = False) -> str:
    """Search a mail folder."""
    return f"{folder}: limit={limit} dry_run={dry_run}"


if __name__ == "__main__":
    print(agent.run_sync("search the Dev folder").output)
