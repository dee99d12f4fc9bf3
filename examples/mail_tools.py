"""A mail server's tools, shaped like the report that started this library.

Models sent ``{"folder": "Dev", "limit": "100"}`` where ``limit`` is an integer; hosts that check
the advertised schema refused the call. Each parameter below advertises, and accepts, both forms;
the optional numbers also take the string ``"null"`` (written through ``Lenient[...]``, which sees
the ``Optional``: a bare ``Optional[LenientUInt]`` cannot).

    pydantic-lenient catalog examples/mail_tools.py --check
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Optional

from pydantic import Field

from pydantic_lenient import Lenient, LenientJson, LenientU32, LenientUInt, StrictBoolish


def search(
    folder: Annotated[str, Field(description="Folder to search, such as INBOX or Dev")],
    to: Annotated[Optional[str], Field(description="Only messages sent to this address")] = None,
    limit: Annotated[
        Lenient[Optional[Annotated[int, Field(ge=0, le=500)]]], Field(description="Most messages to return")
    ] = None,
    offset: Annotated[LenientUInt, Field(description="Messages to skip")] = 0,
) -> dict[str, Any]:
    """Search a mail folder."""
    return {"folder": folder, "to": to, "limit": limit, "offset": offset}  # what the tool received


def fetch_message(
    uid: Annotated[LenientU32, Field(description="The message's UID")],
    max_body_bytes: Annotated[
        Lenient[Optional[LenientUInt]], Field(description="Truncate the body after this many bytes")
    ] = None,
) -> dict[str, Any]:
    """Fetch one message by its IMAP UID."""
    return {"uid": uid, "max_body_bytes": max_body_bytes}


def move_messages(
    uids: Annotated[LenientJson[list[LenientU32]], Field(description="UIDs of the messages to move")],
    destination: str,
    dry_run: Annotated[StrictBoolish, Field(description="Report what would move, and move nothing")] = True,
) -> dict[str, Any]:
    """Move messages to another folder."""
    return {"uids": uids, "destination": destination, "dry_run": dry_run}


TOOLS: list[Callable[..., dict[str, Any]]] = [search, fetch_message, move_messages]

# Calls as models really send them, with whether the server should take each one.
MANGLED_CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("search", {"folder": "Dev", "limit": "100"}, True),
    ("search", {"folder": "Dev", "limit": 100, "offset": "20"}, True),
    ("search", {"folder": "Dev", "limit": None}, True),
    ("search", {"folder": "Dev", "limit": 100.0}, True),
    ("search", {"folder": "Dev", "limit": "abc"}, False),
    ("search", {"folder": "Dev", "limit": "600"}, False),
    ("search", {"folder": "Dev", "limit": " 100"}, False),
    ("search", {"folder": "Dev", "limit": "1_000"}, False),
    ("search", {"folder": "Dev", "limit": "\uff11\uff10\uff10"}, False),
    ("search", {"folder": "0123", "to": "null"}, True),
    ("fetch_message", {"uid": "4294967295", "max_body_bytes": "65536"}, True),
    ("fetch_message", {"uid": "4294967296"}, False),
    ("fetch_message", {"uid": True}, False),
    ("move_messages", {"uids": ["17", 18], "destination": "Archive", "dry_run": "false"}, True),
    ("move_messages", {"uids": [17], "destination": "Archive", "dry_run": "FALSE"}, True),
    ("move_messages", {"uids": "[17, 18]", "destination": "Archive"}, True),
    ("move_messages", {"uids": "17, 18", "destination": "Archive"}, False),
    ("move_messages", {"uids": [17], "destination": "Archive", "dry_run": "no"}, False),
    ("move_messages", {"uids": [17], "destination": "Archive", "dry_run": 0}, False),
]
