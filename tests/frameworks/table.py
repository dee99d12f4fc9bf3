"""A table of realistic tools, and the arguments models send them, for driving each framework's own
schema builder and call path (the `test_*.py` modules beside this one, one per framework).

Every tool records what it received in `RECEIVED`, so a test sees exactly the values the function
got (type included), or that it was never called. The annotations are objects, not strings (no
``from __future__ import annotations``): LlamaIndex reads them from the signature as they are.
"""

import inspect
import threading
from dataclasses import dataclass, field
from typing import Annotated, Any, Optional

from pydantic import BaseModel, Field

RECEIVED: list[dict[str, Any]] = []
_LOCK = threading.Lock()


def record(**arguments: Any) -> str:
    with _LOCK:
        RECEIVED.append(arguments)
    return "done"


def last_received() -> dict[str, Any] | None:
    with _LOCK:
        return RECEIVED[-1] if RECEIVED else None


def forget() -> None:
    with _LOCK:
        RECEIVED.clear()


class MeetingRequest(BaseModel):
    """A meeting to put in the calendar."""

    title: str = Field(description="What the meeting is about")
    minutes: int = Field(ge=5, le=480, description="How long it lasts")
    remote: bool = False


def search_mail(folder: str, limit: int = 10, include_archived: bool = False) -> str:
    """Search a mail folder.

    Args:
        folder: The folder to search.
        limit: How many messages to return at most.
        include_archived: Whether archived messages count.
    """
    return record(folder=folder, limit=limit, include_archived=include_archived)


def account_balance(account: str, include_pending: bool) -> str:
    """The balance of an account.

    Args:
        account: The account's name.
        include_pending: Whether pending transactions count.
    """
    return record(account=account, include_pending=include_pending)


def move_messages(uids: list[int], dry_run: bool = True) -> str:
    """Move messages to the archive.

    Args:
        uids: The messages' ids.
        dry_run: Only say what would move.
    """
    return record(uids=uids, dry_run=dry_run)


def set_temperature(room: str, celsius: Annotated[float, Field(ge=-20, le=40)]) -> str:
    """Set a room's thermostat.

    Args:
        room: The room.
        celsius: The temperature to reach.
    """
    return record(room=room, celsius=celsius)


def list_orders(status: str, page: Optional[int] = None) -> str:
    """List orders, a page at a time.

    Args:
        status: Which orders.
        page: The page, or none for the first.
    """
    return record(status=status, page=page)


async def fetch_message(uid: int, headers_only: bool = False) -> str:
    """Fetch one message.

    Args:
        uid: The message's id.
        headers_only: Only the headers.
    """
    return record(uid=uid, headers_only=headers_only)


def book_meeting(request: MeetingRequest) -> str:
    """Book a meeting.

    Args:
        request: The meeting.
    """
    return record(request=request)


@dataclass(frozen=True)
class Probe:
    """Arguments a model sends to ``tool``: ``received`` is what the function must get (None: refused)."""

    tool: Any
    arguments: dict[str, Any]
    received: dict[str, Any] | None
    note: str = field(default="")

    @property
    def id(self) -> str:
        return f"{self.tool.__name__}-{self.note}"


TOOLS = [search_mail, account_balance, move_messages, set_temperature, list_orders, fetch_message, book_meeting]

PROBES = [
    # native values
    Probe(
        search_mail,
        {"folder": "Dev", "limit": 100},
        {"folder": "Dev", "limit": 100, "include_archived": False},
        "native",
    ),
    # string forms
    Probe(
        search_mail,
        {"folder": "Dev", "limit": "100", "include_archived": "TRUE"},
        {"folder": "Dev", "limit": 100, "include_archived": True},
        "strings",
    ),
    Probe(search_mail, {"folder": "Dev", "limit": "ten"}, None, "word"),
    Probe(search_mail, {"folder": "Dev", "limit": " 100"}, None, "space"),
    Probe(search_mail, {"folder": "Dev", "limit": True}, None, "true-as-int"),
    Probe(
        account_balance,
        {"account": "main", "include_pending": "false"},
        {"account": "main", "include_pending": False},
        "false",
    ),
    Probe(account_balance, {"account": "main", "include_pending": "yes"}, None, "yes"),
    Probe(account_balance, {"account": "main", "include_pending": 0}, None, "zero"),
    # JSON text
    Probe(move_messages, {"uids": '["17", 18]', "dry_run": "false"}, {"uids": [17, 18], "dry_run": False}, "json-text"),
    Probe(move_messages, {"uids": "[17, oops]"}, None, "broken-json"),
    # bounds
    Probe(set_temperature, {"room": "hall", "celsius": "21.5"}, {"room": "hall", "celsius": 21.5}, "float-text"),
    Probe(set_temperature, {"room": "hall", "celsius": "99"}, None, "out-of-range"),
    Probe(set_temperature, {"room": "hall", "celsius": "NaN"}, None, "nan"),
    # "null"
    Probe(list_orders, {"status": "open", "page": "null"}, {"status": "open", "page": None}, "null-text"),
    Probe(list_orders, {"status": "open", "page": "2"}, {"status": "open", "page": 2}, "page-text"),
    # async
    Probe(fetch_message, {"uid": "42", "headers_only": "true"}, {"uid": 42, "headers_only": True}, "async"),
    Probe(fetch_message, {"uid": "4x2"}, None, "async-bad"),
]

# One model parameter: these are the model's fields as the framework advertises them (pydantic-ai:
# at the top level; the others: under "request").
MEETING = {"title": "Review", "minutes": "30", "remote": "true"}
MEETING_RECEIVED = MeetingRequest(title="Review", minutes=30, remote=True)
MEETING_TOO_LONG = {"title": "Review", "minutes": "999"}


def same_values(received: dict[str, Any] | None, expected: dict[str, Any] | None) -> bool:
    """Equal, and each value of the very type expected (``1`` is not ``True``, ``100`` not ``100.0``)."""
    if received is None or expected is None:
        return received is expected
    return received == expected and all(type(received[name]) is type(value) for name, value in expected.items())


def descriptions(schema: Any) -> set[str]:
    """Every description in a schema (the tool's, the models', the fields'), wherever it sits."""
    found: set[str] = set()
    if isinstance(schema, dict):
        text = schema.get("description")
        if isinstance(text, str):
            found.add(text)
        for value in schema.values():
            found |= descriptions(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= descriptions(value)
    return found


def property_names(schema: dict[str, Any]) -> set[str]:
    return set(schema.get("properties", {}))


def left_as_written(function: Any, names: set[str]) -> bool:
    """Whether `lenient_tool` left each of these parameters' annotation exactly as written."""
    from pydantic_lenient import lenient_tool
    from pydantic_lenient.types.annotations import function_hints

    hints = function_hints(function)
    parameters = inspect.signature(lenient_tool(function)).parameters
    return all(parameters[name].annotation is hints[name] for name in names)
