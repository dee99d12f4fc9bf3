"""The gateway as an ASGI application: `app` builds a Starlette app from a `GatewayConfig`.

Routes:

* ``POST /servers/NAME/mcp``: the server ``NAME`` over Streamable HTTP, both eras, each request
  answered with one JSON body (``application/json``), or, when it asks for progress or is a
  ``subscriptions/listen`` and accepts ``text/event-stream``, with its notifications and then its
  answer (`StreamedAnswer`);
* ``POST /mcp``: every server at once, each tool listed as ``NAME__TOOL`` (``"aggregate": false``
  in the config turns it off);
* ``GET /healthz``: ``ok`` and which upstreams are up, for a load balancer's checks.

Stateless by design: a handshake-era client's ``Mcp-Session-Id`` holds no state, only the name it
gave in ``initialize`` (`pydantic_lenient.gateway.sessions`), so its requests may land on any
replica, like 2026-07-28 ones. A replica answers ``initialize`` from its own handshake with
the upstream (`Lane.initialize_answer`), ``ping`` itself, and relays everything else. A client's
notification is accepted (202); cancelling is closing the request (the upstream is sent
``notifications/cancelled`` for it). A ``GET`` (the server's own message stream) is 405, as in the
SDK's stateless mode: a server-initiated request or a notification that names no request has no
client to go to (``docs/gateway.md``, "Server-to-client messages").
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Receive

from pydantic_lenient.observe.clients import RELAYED_CLIENT_META_KEY
from pydantic_lenient.observe.logdir import LogDirError
from pydantic_lenient.proxy.core import ProxyOptions
from pydantic_lenient.proxy.messages import dumped, is_id, parsed_message

from .aggregate import PREFIX_SEPARATOR, Aggregate
from .auth import METADATA_PATH, Authenticator, OAuthResource, SharedToken
from .client_lanes import ClientLane, ClientSessions, TooManySessions
from .config import GatewayConfig, is_loopback
from .eras import Era, era_of
from .event_stream import StreamedAnswer, accepts_event_stream, disconnected
from .lanes import Lane, LaneUnavailable, Notified, error_response, progress_token
from .security import Guard, RateLimit
from .sessions import client_info_of, session_id

__all__ = ("Gateway", "app", "app_from_environment")


CONFIG_VARIABLE = "PYDANTIC_LENIENT_GATEWAY_CONFIG"
HOST_VARIABLE = "PYDANTIC_LENIENT_GATEWAY_HOST"  # the address `serve --host` bound, when not the config's
_JSON = "application/json"
_SESSION_HEADER = "mcp-session-id"


class Gateway:
    """The servers of one configuration, each with a `Lane` per era, and the requests' routing."""

    def __init__(self, config: GatewayConfig, telemetry: Any = None) -> None:
        self.config = config
        self.settings = config.gateway
        self.options: dict[tuple[str, Era], ProxyOptions] = {}
        replica = f"{socket.gethostname()}-{os.getpid()}"
        for name, server in config.mcp_servers.items():
            normalizer = None
            if server.rules is not None:
                from pydantic_lenient.normalizer.engine import Normalizer

                normalizer = Normalizer.from_file(server.rules)
            for era in ("legacy", "modern"):
                # One directory per replica and era: no file is ever written by two processes.
                log_dir = Path(server.log_dir) / f"{replica}-{era}" if server.log_dir is not None else None
                self.options[(name, era)] = ProxyOptions(
                    style=server.style, normalizer=normalizer, log_dir=log_dir, telemetry=telemetry, upstream_name=name
                )
        self.lanes: dict[tuple[str, Era], Lane] = {}
        self.sessions = ClientSessions(
            self.settings, {name: self.options[(name, "legacy")] for name in config.mcp_servers}
        )
        self.aggregate = Aggregate(list(config.mcp_servers), self.lane, self.settings.call_timeout)
        per_tool = self.settings.rate_limits.per_tool
        self.per_tool = RateLimit(per_tool) if per_tool is not None else None

    def lane(self, name: str, era: Era) -> Lane:
        lane = self.lanes.get((name, era))
        if lane is None:
            lane = self.lanes[(name, era)] = Lane(name, self.config.mcp_servers[name], era, self.options[(name, era)])
            lane.start()
        return lane

    async def start(self) -> None:
        """Start every server's upstreams, one per era, and wait (a while) for them to be up."""
        for name in self.config.mcp_servers:
            self.lane(name, "legacy")
            self.lane(name, "modern")
        lanes = list(self.lanes.values())
        await asyncio.gather(*(lane.wait_ready(10.0) for lane in lanes), return_exceptions=True)
        if any(server.sessions == "per-client" for server in self.config.mcp_servers.values()):
            self.sessions.start()

    async def close(self) -> None:
        await asyncio.gather(self.sessions.close(), *(lane.shutdown() for lane in self.lanes.values()))

    # ---- per-client sessions (`pydantic_lenient.gateway.client_lanes`)

    async def _new_session(self, name: str, message: dict[str, Any], request: Request) -> Response:
        """A handshake-era ``initialize`` for a ``per-client`` server: an upstream of its own, and a
        session id that finds it."""
        request_id = message["id"]
        params = message.get("params")
        try:
            lane, session = await self.sessions.open(
                name, self.config.mcp_servers[name], params if isinstance(params, dict) else {}, _credential(request)
            )
        except TooManySessions:
            answer = error_response(request_id, "the gateway holds as many sessions as it may: retry later")
            return _answer(answer, 503, headers={"retry-after": "30"})
        except LogDirError as error:
            return _answer(error_response(request_id, f"`{name}`'s log directory cannot be used: {error}"))
        except LaneUnavailable as unavailable:
            return _answer(error_response(request_id, str(unavailable)))
        answer = dumped({"jsonrpc": "2.0", "id": request_id, "result": lane.handshake})
        return _answer(answer, headers={_SESSION_HEADER: session})

    def _client_lane(self, request: Request) -> ClientLane | None:
        return self.sessions.find(request.headers.get(_SESSION_HEADER), _credential(request))

    async def _end_session(self, request: Request) -> Response:
        lane = self._client_lane(request)
        if lane is None:
            return PlainTextResponse("no such session\n", status_code=404)
        await lane.shutdown("the client ended its session")
        return Response(status_code=200)

    # ---- HTTP

    async def server_endpoint(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in self.config.mcp_servers:
            return PlainTextResponse("no such server\n", status_code=404)
        return await self._endpoint(request, name)

    async def aggregate_endpoint(self, request: Request) -> Response:
        return await self._endpoint(request, None)

    async def health(self, request: Request) -> Response:
        up = {f"{name}/{era}": lane.ready.is_set() for (name, era), lane in self.lanes.items()}
        return JSONResponse({"status": "ok", "upstreams": up})

    async def _endpoint(self, request: Request, name: str | None) -> Response:
        per_client = name is not None and self.config.mcp_servers[name].sessions == "per-client"
        if per_client and request.method in ("GET", "DELETE"):
            return await (self._session_stream(request) if request.method == "GET" else self._end_session(request))
        if request.method != "POST":  # a shared server has no stream of its own to offer a client
            return Response(status_code=405, headers={"allow": "POST"})
        try:
            body = await _body(request.receive, self.settings.max_body_bytes)
        except _Disconnected:
            return Response(status_code=499)
        if body is None:
            return PlainTextResponse(f"the body is over {self.settings.max_body_bytes} bytes\n", status_code=413)
        message, verbatim, _ = parsed_message(body)
        if isinstance(message, list):
            return _answer(
                error_response(None, "JSON-RPC batches are not served (MCP has none since 2025-06-18)", -32600), 400
            )
        if not isinstance(message, dict):
            return _answer(error_response(None, "not a JSON-RPC message", -32700), 400)
        method, request_id = message.get("method"), message.get("id")
        era = era_of(message)
        client_lane = None
        if per_client and era == "legacy" and method != "initialize":
            client_lane = self._client_lane(request)
            if client_lane is None:  # the transport's answers: 400 without a session id, 404 for one that ended
                known = _SESSION_HEADER in request.headers
                why = "this session has ended: initialize again" if known else "initialize first: no Mcp-Session-Id"
                return _answer(error_response(request_id, why, -32001), 404 if known else 400)
        if not isinstance(method, str):  # the client's answer to a request of the upstream's
            if client_lane is not None:
                client_lane.reply(dumped(message, verbatim))
            return Response(status_code=202)
        if request_id is None:
            self._notification(name, era, message, client_lane)
            return Response(status_code=202)
        if not is_id(request_id):
            return _answer(error_response(None, "the request id must be a string or an integer", -32600), 400)
        if method == "ping":
            return _answer(dumped({"jsonrpc": "2.0", "id": request_id, "result": {}}))
        if self.per_tool is not None and method == "tools/call" and not self._tool_allowed(name, message):
            return _answer(error_response(request_id, "this tool's rate limit is reached: retry later"), 429)
        if per_client and era == "legacy" and method == "initialize":
            assert name is not None
            return await self._new_session(name, message, request)
        if era == "legacy" and method == "tools/call":
            message = _with_session_client(message, request.headers.get(_SESSION_HEADER))

        async def answer(notified: Notified | None) -> bytes:
            try:
                if name is None:
                    return await self.aggregate.answer(message, era, notified)
                lane = client_lane or self.lane(name, era)
                if method == "initialize" and era == "legacy":
                    await lane.wait_ready(self.settings.call_timeout)
                    params = message.get("params")
                    requested = params.get("protocolVersion") if isinstance(params, dict) else None
                    return lane.initialize_answer(request_id, requested)
                return await lane.exchange(message, self.settings.call_timeout, verbatim, notified)
            except LaneUnavailable as unavailable:
                return error_response(request_id, str(unavailable))

        headers = {}
        if method == "initialize" and era == "legacy":  # the client's name, carried by its session id
            params = message.get("params")
            session = session_id(params.get("clientInfo")) if isinstance(params, dict) else None
            headers = {_SESSION_HEADER: session} if session is not None else {}

        streams = accepts_event_stream(request.headers.get("accept", ""))
        if method == "subscriptions/listen" and not streams:
            return PlainTextResponse("subscriptions/listen is answered as text/event-stream only\n", status_code=406)
        if streams and (
            method == "subscriptions/listen" or progress_token(message) is not None or client_lane is not None
        ):
            return StreamedAnswer(answer)
        try:
            return _answer(await _until_disconnected(answer(None), request), headers=headers)
        except _Disconnected:
            return Response(status_code=499)

    def _notification(self, name: str | None, era: Era, message: dict[str, Any], lane: ClientLane | None) -> None:
        """A client's notification: to its own session's upstream, or (a shared server's) to the
        era's upstream; the lane has sent its own ``notifications/initialized``, and a cancellation
        names the client's own request id."""
        method = message["method"]
        if method == "notifications/initialized":
            return
        if method == "notifications/cancelled":
            params = message.get("params")
            cancelled = params.get("requestId") if isinstance(params, dict) else None
            if lane is not None and is_id(cancelled):
                lane.cancel(cancelled)
            return  # on a shared server the client's ids are not the upstream's: closing the request cancels
        if lane is not None:
            lane.reply(dumped(message))
        elif name is not None:
            self.lane(name, era).notify(message)

    async def _session_stream(self, request: Request) -> Response:
        """A client session's ``GET`` stream: what its upstream sends it while no request is open."""
        lane = self._client_lane(request)
        if lane is None:
            return PlainTextResponse("no such session\n", status_code=404)
        if not accepts_event_stream(request.headers.get("accept", "")):
            return PlainTextResponse("the stream is text/event-stream only\n", status_code=406)
        return StreamedAnswer(lane.listen, at_once=True)

    def _tool_allowed(self, name: str | None, message: dict[str, Any]) -> bool:
        assert self.per_tool is not None
        params = message.get("params")
        tool = params.get("name") if isinstance(params, dict) else None
        key = f"{name}{PREFIX_SEPARATOR}{tool}" if name is not None else str(tool)
        return self.per_tool.allow(key[:300])


class _Disconnected(Exception):
    """The client closed its connection before its answer."""


async def _until_disconnected(answer: Awaitable[bytes], request: Request) -> bytes:
    """``answer`` awaited, cancelled (and so cancelled upstream) when the client goes away first."""
    current = asyncio.current_task()
    assert current is not None
    left = False

    def cancel(watched: asyncio.Task[None]) -> None:
        nonlocal left
        if not watched.cancelled() and watched.exception() is None:
            left = True
            current.cancel()

    watching = asyncio.ensure_future(disconnected(request.receive))
    watching.add_done_callback(cancel)
    try:
        return await answer
    except asyncio.CancelledError:
        if left:
            if sys.version_info >= (3, 11):
                current.uncancel()  # the cancellation was ours, to stop waiting: the task goes on
            raise _Disconnected from None
        raise
    finally:
        watching.remove_done_callback(cancel)
        watching.cancel()


async def _body(receive: Receive, limit: int) -> bytes | None:
    """The request's body, or None past ``limit`` bytes (a chunked body has no Content-Length to refuse)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _answer(line: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(line, status_code=status, media_type=_JSON, headers=headers)


def _credential(request: Request) -> bytes:
    """What binds a client session to its caller: a digest of the request's ``Authorization``."""
    return hashlib.sha256(request.headers.get("authorization", "").encode("latin-1", "replace")).digest()


def _with_session_client(message: dict[str, Any], session: str | None) -> dict[str, Any]:
    """A handshake-era call with the client its session id names noted in its ``_meta``, for the
    relay (`pydantic_lenient.observe.clients.RELAYED_CLIENT_META_KEY`), which reads the note and
    sends the call on without it."""
    client_info = client_info_of(session)
    params = message.get("params")
    if client_info is None or not isinstance(params, dict):
        return message
    meta = params.get("_meta")
    noted = {**(meta if isinstance(meta, dict) else {}), RELAYED_CLIENT_META_KEY: client_info}
    return {**message, "params": {**params, "_meta": noted}}


def app(config: GatewayConfig, *, freeze_gc: bool = True) -> Any:
    """The ASGI application serving ``config``: a Starlette app behind the `Guard`.

    Raises `pydantic_lenient.gateway.config.ConfigError` when the bind is wider than loopback and
    no token or OAuth is configured. ``freeze_gc``: move what start-up made out of the collector's way
    (``gc.freeze``), so a full collection does not stall every call in flight."""
    settings = config.gateway
    authenticator = _authenticator(config)
    loopback = is_loopback(settings.host)
    if not loopback and authenticator is None:
        from .config import ConfigError

        raise ConfigError(f"refusing to listen on {settings.host} without auth: {AUTH_OPTIONS}")
    telemetry = _telemetry()
    gateway = Gateway(config, telemetry.telemetry if telemetry is not None else None)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await gateway.start()
        if freeze_gc:
            gc.collect()
            gc.freeze()
        try:
            yield
        finally:
            await gateway.close()
            if telemetry is not None:
                telemetry.shutdown()

    methods = ["GET", "POST", "DELETE"]
    routes = [
        Route("/servers/{name}/mcp", gateway.server_endpoint, methods=methods),
        Route("/healthz", gateway.health, methods=["GET"]),
    ]
    if settings.aggregate:
        routes.append(Route("/mcp", gateway.aggregate_endpoint, methods=methods))
    if isinstance(authenticator, OAuthResource):
        document = authenticator.metadata()

        async def metadata(_: Request) -> Response:
            return JSONResponse(document)

        routes += [Route(path, metadata, methods=["GET"]) for path in (METADATA_PATH, METADATA_PATH + "/{rest:path}")]
    starlette = Starlette(routes=routes, lifespan=lifespan)
    starlette.state.gateway = gateway
    return Guard(
        starlette,
        authenticator=authenticator,
        loopback_bind=loopback,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
        max_body_bytes=settings.max_body_bytes,
        max_concurrency=settings.max_concurrency,
        per_client=settings.rate_limits.per_client,
    )


AUTH_OPTIONS = "set tokenFile, tokenEnv or oauth in the config's gateway section"


def _authenticator(config: GatewayConfig) -> Authenticator | None:
    """Who may call: the shared token, OAuth access tokens, or anyone (None: a loopback bind only)."""
    token = config.token()
    if token is not None:
        return SharedToken(token)
    if config.gateway.oauth is not None:
        return OAuthResource(config.gateway.oauth)
    return None


def app_from_environment() -> Any:
    """`app` for the configuration named by ``PYDANTIC_LENIENT_GATEWAY_CONFIG`` (bound to
    ``PYDANTIC_LENIENT_GATEWAY_HOST`` when set): the factory for ``uvicorn --factory``, gunicorn's
    uvicorn workers and hypercorn (each worker calls it)."""
    from .config import ConfigError, load_config

    path = os.environ.get(CONFIG_VARIABLE)
    if not path:
        raise ConfigError(f"set {CONFIG_VARIABLE} to the gateway's config file")
    config = load_config(path)
    host = os.environ.get(HOST_VARIABLE)
    if host:
        config = config.model_copy(update={"gateway": config.gateway.model_copy(update={"host": host})})
    return app(config)


def _telemetry() -> Any:
    """OpenTelemetry as the standard ``OTEL_*`` variables ask (None when they ask for none)."""
    from pydantic_lenient.observe.otel_setup import telemetry_from_environment

    return telemetry_from_environment()
