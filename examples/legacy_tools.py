"""The same mail tools before moving to lenient types: what the audit finds.

pydantic-lenient catalog examples/legacy_tools.py --check    # exits 1, and says what to change
"""

from __future__ import annotations

from typing import Any, Optional


def search(folder: str, to: Optional[str] = None, limit: Optional[int] = None, offset: int = 0) -> list[Any]:
    """Search a mail folder."""
    return []


def fetch_message(uid: int, max_body_bytes: Optional[int] = None) -> dict[str, Any]:
    """Fetch one message by its IMAP UID."""
    return {}


def move_messages(uids: list[int], destination: str, dry_run: bool = True) -> dict[str, Any]:
    """Move messages to another folder."""
    return {}


TOOLS = [search, fetch_message, move_messages]
