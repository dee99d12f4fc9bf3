"""The proxy's bookkeeping for one session: which requests the upstream still owes, the client's
messages held behind the proxy's own listing, and the proxy's own requests (pings and listings).

The proxy's own requests speak the era of the client's connection. At MCP 2026-07-28 there is no
``initialize``: every request carries its protocol version, capabilities and ``clientInfo`` in
``params._meta``, and a dual-era server decides a connection's era by its first request. So the
proxy copies that envelope from the client's latest request into its own, and sends none after an
``initialize`` (the handshake era): its listing is then what the client's own would have been, and
never switches the connection to the other era.

The proxy's own request ids have a random part per process, so no client can send one by chance or
on purpose. What is remembered is bounded: at most ``_WAITING_LIMIT`` unanswered requests.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import Any

from .messages import RequestId, dumped

__all__ = ("ENVELOPE_KEYS", "LIST_PREFIX", "OWN_PREFIX", "Session")

OWN_PREFIX = f"pydantic-lenient-{secrets.token_hex(8)}-"
_PING_PREFIX = f"{OWN_PREFIX}ping-"
LIST_PREFIX = f"{OWN_PREFIX}list-"
_WAITING_LIMIT = 10_000  # unanswered requests remembered, so each gets one answer should the upstream go
_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
ENVELOPE_KEYS = (_PROTOCOL_VERSION, "io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo")
"""The per-request ``_meta`` keys of MCP 2026-07-28 that say who asks, in which era (not ``logLevel``:
the proxy's own requests opt into nothing)."""


class Session:
    """What one session remembers between messages.

    ``waiting``: each id the upstream owes an answer, with the methods in flight under it (a client
    may reuse an id still in flight); ``held``: the client's messages waiting behind the proxy's
    own listing (None when none is under way); ``listed``: the proxy listed the tools itself since
    the last ``list_changed``.

    >>> session = Session()
    >>> session.wait(1, "tools/call")
    >>> session.wait(1, "tools/list")
    >>> session.answered_method(1, {"result": {"tools": []}}), session.answered_method(1, {"result": {}})
    ('tools/list', 'tools/call')
    >>> session.waiting
    {}
    """

    def __init__(self) -> None:
        self.waiting: dict[RequestId, list[str]] = {}
        self.waiting_count = 0
        self.pings: dict[str, Callable[[], None]] = {}
        self.pings_sent = 0
        self.listed = False
        self.held: list[bytes] | None = None
        self.list_pages = 0
        self.envelope: dict[str, Any] | None = None

    def note_era(self, method: str, params: Any) -> None:
        """Learn the era from a request of the client's: ``initialize`` opens the handshake era; a
        request whose ``_meta`` names a protocol version is of the per-request era, and its envelope
        is what the proxy's own requests carry.

        >>> session = Session()
        >>> meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": 3}
        >>> session.note_era("tools/call", {"name": "add", "_meta": meta})
        >>> session.envelope
        {'io.modelcontextprotocol/protocolVersion': '2026-07-28'}
        >>> session.note_era("initialize", {"protocolVersion": "2025-11-25"}); session.envelope is None
        True
        """
        if method == "initialize":
            self.envelope = None
            return
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get(_PROTOCOL_VERSION), str):
            self.envelope = {key: meta[key] for key in ENVELOPE_KEYS if key in meta}

    @property
    def protocol_version(self) -> str | None:
        """The per-request era's protocol version the client speaks (None: the handshake era, or not known yet)."""
        return self.envelope[_PROTOCOL_VERSION] if self.envelope is not None else None

    def _own_request(self, request_id: str, method: str, params: dict[str, Any] | None = None) -> bytes:
        """One of the proxy's own requests, in the client's era (its envelope in ``_meta``)."""
        if self.envelope is not None:
            params = {**(params or {}), "_meta": dict(self.envelope)}
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            request["params"] = params
        return dumped(request)

    def wait(self, request_id: RequestId, method: str) -> RequestId | None:
        """Remember that the upstream owes ``request_id`` an answer to ``method``; the oldest is forgotten
        past ``_WAITING_LIMIT`` (a client that never waits for its answers must not grow memory), and
        its id returned."""
        forgotten = None
        if self.waiting_count >= _WAITING_LIMIT:
            forgotten = next(iter(self.waiting))
            self.waiting_count -= len(self.waiting.pop(forgotten))
        methods = self.waiting.get(request_id)
        if methods is None:
            self.waiting[request_id] = [method]
        else:  # the client reused an id still in flight: told apart by the answer's shape
            methods.append(method)
        self.waiting_count += 1
        return forgotten

    def answered_method(self, request_id: RequestId, message: Mapping[str, Any]) -> str | None:
        """The method of the request ``message`` answers, no longer waited for (None: not waited for)."""
        methods = self.waiting.get(request_id)
        if methods is None:
            return None
        index = 0
        if len(methods) > 1:  # one id for several methods: a tools/list answer is the one with tools
            result = message.get("result")
            listing = isinstance(result, dict) and isinstance(result.get("tools"), list)
            matching = [i for i, method in enumerate(methods) if (method == "tools/list") == listing]
            index = matching[0] if matching else 0
        method = methods.pop(index)
        if not methods:
            del self.waiting[request_id]
        self.waiting_count -= 1
        return method

    def cancelled(self, request_id: RequestId) -> bool:
        """The client cancelled a request: the upstream need not answer it (MCP), so it is no longer owed."""
        if request_id not in self.waiting:
            return False
        self.waiting_count -= len(self.waiting.pop(request_id))
        return True

    def abandoned(self) -> dict[RequestId, list[str]]:
        """Every request still owed, forgotten."""
        waiting, self.waiting, self.waiting_count = self.waiting, {}, 0
        return waiting

    def ping(self, on_reply: Callable[[], None]) -> bytes:
        """A liveness request; its reply, whatever it says, calls ``on_reply`` (`own_reply`). It is
        ``ping`` in the handshake era, and ``server/discover`` in the per-request era, which has no
        ``ping`` (2026-07-28 removed it; discover is its one request without side effects)."""
        self.pings_sent += 1
        ping_id = f"{_PING_PREFIX}{self.pings_sent}"
        self.pings[ping_id] = on_reply
        return self._own_request(ping_id, "ping" if self.envelope is None else "server/discover")

    def own_reply(self, request_id: str) -> bool:
        """Whether ``request_id`` is a ping's: its ``on_reply`` is called."""
        on_reply = self.pings.pop(request_id, None)
        if on_reply is None:
            return False
        on_reply()
        return True

    def hold(self, line: bytes) -> None:
        """Start the proxy's own listing, holding ``line`` and what follows behind it."""
        self.listed, self.held, self.list_pages = True, [line], 0

    def list_request(self, cursor: str | None) -> bytes:
        """The proxy's own ``tools/list`` request for the next page."""
        self.list_pages += 1
        return self._own_request(
            f"{LIST_PREFIX}{self.list_pages}", "tools/list", None if cursor is None else {"cursor": cursor}
        )
