"""The gateway's front door, as one ASGI middleware: Host and Origin (DNS rebinding), the bearer
token, the body size and the number of requests in flight, checked before any route runs.

* **Host**: with no ``allowedHosts``, a loopback bind accepts only loopback Host headers
  (``127.0.0.1``, ``localhost``, ``[::1]``, any port), as the MCP SDK's own app does; a wider bind
  (which needs a token) accepts any Host unless ``allowedHosts`` names them. 421 otherwise.
* **Origin**: a request that carries one must name a loopback origin or one in
  ``allowedOrigins``; a browser page elsewhere gets 403.
* **Credentials**: what the `Authenticator` asks (`pydantic_lenient.gateway.auth`): one shared
  bearer token, or an OAuth 2.1 access token; 401 with ``WWW-Authenticate`` otherwise.
  ``/healthz`` needs none, nor the OAuth metadata.
* **Caps**: a declared ``Content-Length`` over the cap is 413 before the body is read (the route
  counts the bytes of a chunked body too); past ``maxConcurrency`` requests in flight, 503 with
  ``Retry-After``; past ``rateLimits.perClient`` requests a second from one address, 429.

Limits and caps are per worker process: a replica keeps no state another needs.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from .auth import Authenticator, Refusal

__all__ = ("Guard", "RateLimit", "host_name")

_LOOPBACK_NAMES = frozenset(("127.0.0.1", "localhost", "[::1]", "::1"))


def host_name(value: str) -> str:
    """The name in a Host header or an origin's authority, without the port, lower case.

    >>> host_name("LocalHost:8765"), host_name("[::1]:80"), host_name("example.com")
    ('localhost', '[::1]', 'example.com')
    """
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class RateLimit:
    """A token bucket per key: ``rate`` requests a second, in bursts of up to ``rate`` (at least 1).
    At most ``max_keys`` keys are remembered (the least recently refilled go first), so a flood of
    addresses cannot grow memory.

    >>> limit = RateLimit(2.0)
    >>> [limit.allow("a", now=0.0) for _ in range(3)], limit.allow("b", now=0.0), limit.allow("a", now=0.5)
    ([True, True, False], True, True)
    """

    def __init__(self, rate: float, max_keys: int = 10_000) -> None:
        self.rate, self.burst, self.max_keys = rate, max(rate, 1.0), max_keys
        self.buckets: dict[str, tuple[float, float]] = {}

    def allow(self, key: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        tokens, last = self.buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        allowed = tokens >= 1.0
        self.buckets[key] = (tokens - 1.0 if allowed else tokens, now)
        if len(self.buckets) > self.max_keys:
            del self.buckets[next(iter(self.buckets))]
        return allowed


class Guard:
    """The checks above, in front of ``app``."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        authenticator: Authenticator | None,
        loopback_bind: bool,
        allowed_hosts: Iterable[str],
        allowed_origins: Iterable[str],
        max_body_bytes: int,
        max_concurrency: int,
        per_client: float | None = None,
    ) -> None:
        self.app = app
        self.per_client = RateLimit(per_client) if per_client is not None else None
        self.authenticator = authenticator
        self.allowed_hosts = frozenset(host.lower() for host in allowed_hosts)
        self.loopback_bind = loopback_bind
        self.allowed_origins = frozenset(origin.rstrip("/").lower() for origin in allowed_origins)
        self.max_body_bytes = max_body_bytes
        self.max_concurrency = max_concurrency
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name, value)
        refusal = self._refusal(headers)
        path = scope["path"]
        if (
            refusal is None
            and self.authenticator is not None
            and path != "/healthz"
            and not self.authenticator.public(path)
        ):
            refusal = await self.authenticator.refusal(headers.get(b"authorization", b""))
        if refusal is not None:
            status, text, extra = refusal
            await _plain(send, status, text, extra)
            return
        if self.per_client is not None and scope["path"] != "/healthz":
            client = scope.get("client")
            if not self.per_client.allow(str(client[0]) if client else ""):
                await _plain(send, 429, "too many requests from this address", [(b"retry-after", b"1")])
                return
        if self.in_flight >= self.max_concurrency:
            await _plain(send, 503, "the gateway is at its concurrency limit", [(b"retry-after", b"1")])
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1

    def _refusal(self, headers: dict[bytes, bytes]) -> Refusal | None:
        host = headers.get(b"host", b"").decode("latin-1")
        if not self._host_allowed(host):
            return 421, "this Host is not served here", []
        origin = headers.get(b"origin")
        if origin is not None and not self._origin_allowed(origin.decode("latin-1")):
            return 403, "this Origin may not use the gateway", []
        length = headers.get(b"content-length")
        if length is not None:
            try:
                too_long = int(length) > self.max_body_bytes
            except ValueError:
                return 400, "Content-Length is not a number", []
            if too_long:
                return 413, f"the body is over {self.max_body_bytes} bytes", []
        return None

    def _host_allowed(self, host: str) -> bool:
        if self.allowed_hosts:
            return host.lower() in self.allowed_hosts or host_name(host) in self.allowed_hosts
        return not self.loopback_bind or host_name(host) in _LOOPBACK_NAMES

    def _origin_allowed(self, origin: str) -> bool:
        origin = origin.rstrip("/").lower()
        if origin in self.allowed_origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and host_name(parts.netloc) in _LOOPBACK_NAMES


async def _plain(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]]) -> None:
    body = text.encode() + b"\n"
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
