"""Tool inputs for a mail server, shaped like the report that started this library.

Models sent ``{"folder": "Dev", "limit": "100"}`` where ``limit`` is an integer; hosts that check
the advertised schema refused the call. Each input below advertises, and accepts, both forms.
"""

from __future__ import annotations

from typing import Annotated, Any, Optional

from pydantic import BaseModel, Field

from pydantic_lenient import LenientJson, LenientU32, LenientUInt, StrictBoolish


class SearchInput(BaseModel):
    """Search a mail folder."""

    folder: str = Field(description="Folder to search, such as INBOX or Dev")
    to: Optional[str] = Field(default=None, description="Only messages sent to this address")  # noqa: UP045
    limit: Optional[Annotated[LenientUInt, Field(le=500)]] = Field(  # noqa: UP045
        default=None, description="Most messages to return"
    )
    offset: LenientUInt = Field(default=0, description="Messages to skip")


class FetchMessageInput(BaseModel):
    """Fetch one message by its IMAP UID."""

    uid: LenientU32 = Field(description="The message's UID")
    max_body_bytes: Optional[LenientUInt] = Field(  # noqa: UP045
        default=None, description="Truncate the body after this many bytes"
    )


class MoveMessagesInput(BaseModel):
    """Move messages to another folder."""

    uids: LenientJson[list[LenientU32]] = Field(description="UIDs of the messages to move")
    destination: str
    dry_run: StrictBoolish = Field(default=True, description="Report what would move, and move nothing")


TOOLS: dict[str, type[BaseModel]] = {
    "search": SearchInput,
    "fetch_message": FetchMessageInput,
    "move_messages": MoveMessagesInput,
}

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
