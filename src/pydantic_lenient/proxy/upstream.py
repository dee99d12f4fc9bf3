"""How the proxy reaches its upstream server: the contract every upstream transport keeps.

An upstream transport is one module with one class that keeps `Upstream`: ``child`` (a stdio
server started as a child process, `ChildUpstream`) and ``remote`` (a server over Streamable HTTP,
`HttpUpstream`); `pydantic_lenient.proxy.transports.open_upstream` picks one for an address. A
transport moves whole messages, as bytes, one per line, and knows nothing of what they say: the
relay session (`pydantic_lenient.proxy.core`) decides that. Adding a transport means one new module
keeping `Upstream`, and one branch in `open_upstream`.

The contract, both ways:

* the session calls the upstream's `Upstream.attach` (once, with itself as the `Peer`), then
  `Upstream.start`, `Upstream.send` for each batch of lines, `Upstream.pause_output` while the
  host does not keep up, and `Upstream.stop` once, at the end;
* the upstream calls the `Peer` back: `Peer.upstream_lines` with the messages it received, in
  order; `Peer.pause_client_input` while it cannot take more; `Peer.upstream_ended` when it is
  gone (the session then answers every request still owed); and asks `Peer.owes` whether an
  answer is still awaited (a Streamable HTTP stream is resumed only for one).

An upstream names itself (`Upstream.name`) in errors without any secret (no URL query, no
credentials), and says its ``network.transport`` (`Upstream.network_transport`, OpenTelemetry's
value: ``pipe`` or ``tcp``) for the spans of the calls it carries.

Standard library only: the session starts a child upstream before pydantic loads.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ("Peer", "StartError", "Upstream")


class StartError(Exception):
    """The upstream cannot be started (or reached): one line on stderr, exit code 2."""


class Peer(Protocol):
    """What an upstream tells the session it serves (the relay session, `pydantic_lenient.proxy.core`)."""

    def upstream_lines(self, lines: list[bytes]) -> None:
        """Messages from the upstream, each one line ending in ``\\n``, in the order received."""

    def upstream_ended(self, problem: str | None) -> None:
        """The upstream is gone: ``problem`` says how (None: it exited)."""

    def pause_client_input(self, paused: bool) -> None:
        """Stop (or go on) reading the host: the upstream cannot take more for now."""

    def owes(self, request_id: Any) -> bool:
        """Whether the upstream still owes an answer to ``request_id``."""


class Upstream(Protocol):
    """One upstream server, for one session."""

    name: str
    """How errors name it: no secret (no URL query, no credentials)."""

    network_transport: str
    """OpenTelemetry's ``network.transport`` of the connection: ``pipe`` or ``tcp``."""

    def attach(self, peer: Peer) -> None:
        """Hand everything the upstream sends, from its first byte, to ``peer``."""

    async def start(self) -> None:
        """Start or reach the upstream; raise `StartError` when it cannot be. Called again when
        it started early, it does nothing."""

    def send(self, data: bytes) -> None:
        """Send one or more messages, each a line."""

    def pause_output(self, paused: bool) -> None:
        """Stop or go on handing the upstream's messages to the peer."""

    async def stop(self) -> None:
        """End the session with the upstream (every message sent before has been handed on)."""
