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
import logging
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

from pydantic_lenient._version import __version__
from pydantic_lenient.observe.clients import RELAYED_CLIENT_META_KEY
from pydantic_lenient.proxy.core import ProxyOptions
from pydantic_lenient.proxy.messages import dumped, is_id, parsed, parsed_message

from .auth import METADATA_PATH, Authenticator, OAuthResource, SharedToken
from .config import GatewayConfig, is_loopback
from .eras import MODERN_VERSION, Era, era_of
from .event_stream import StreamedAnswer, accepts_event_stream
from .lanes import Lane, LaneUnavailable, Notified, error_response, progress_token
from .security import Guard, RateLimit
from .sessions import client_info_of, session_id

__all__ = ("Gateway", "app", "app_from_environment")

logger = logging.getLogger("pydantic_lenient.gateway")

CONFIG_VARIABLE = "PYDANTIC_LENIENT_GATEWAY_CONFIG"
HOST_VARIABLE = "PYDANTIC_LENIENT_GATEWAY_HOST"  # the address `serve --host` bound, when not the config's
_PREFIX_SEPARATOR = "__"
_JSON = "application/json"
_MAX_LIST_PAGES = 20  # pages of one server's tools/list the aggregated endpoint follows


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

    async def close(self) -> None:
        await asyncio.gather(*(lane.shutdown() for lane in self.lanes.values()))

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
        if request.method != "POST":  # no server-to-client stream in a stateless gateway
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
        if not isinstance(method, str):
            return Response(status_code=202)  # a reply to a server-to-client request: none are relayed
        era = era_of(message)
        if request_id is None:
            if name is not None and method not in ("notifications/initialized", "notifications/cancelled"):
                self.lane(name, era).notify(message)
            return Response(status_code=202)
        if not is_id(request_id):
            return _answer(error_response(None, "the request id must be a string or an integer", -32600), 400)
        if method == "ping":
            return _answer(dumped({"jsonrpc": "2.0", "id": request_id, "result": {}}))
        if self.per_tool is not None and method == "tools/call" and not self._tool_allowed(name, message):
            return _answer(error_response(request_id, "this tool's rate limit is reached: retry later"), 429)

        if era == "legacy" and method == "tools/call":
            message = _with_session_client(message, request.headers.get("mcp-session-id"))

        async def answer(notified: Notified | None) -> bytes:
            try:
                if name is None:
                    return await self._aggregate(message, era, notified)
                lane = self.lane(name, era)
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
            headers = {"mcp-session-id": session} if session is not None else {}

        streams = accepts_event_stream(request.headers.get("accept", ""))
        if method == "subscriptions/listen" and not streams:
            return PlainTextResponse("subscriptions/listen is answered as text/event-stream only\n", status_code=406)
        if streams and (method == "subscriptions/listen" or progress_token(message) is not None):
            return StreamedAnswer(answer)
        try:
            return _answer(await _until_disconnected(answer(None), request), headers=headers)
        except _Disconnected:
            return Response(status_code=499)

    def _tool_allowed(self, name: str | None, message: dict[str, Any]) -> bool:
        assert self.per_tool is not None
        params = message.get("params")
        tool = params.get("name") if isinstance(params, dict) else None
        key = f"{name}{_PREFIX_SEPARATOR}{tool}" if name is not None else str(tool)
        return self.per_tool.allow(key[:300])

    # ---- the aggregated endpoint

    async def _aggregate(self, message: dict[str, Any], era: Era, notified: Notified | None) -> bytes:
        method, request_id = message["method"], message["id"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        if method in ("initialize", "server/discover"):
            result = await self._aggregate_handshake(era, params)
            return dumped({"jsonrpc": "2.0", "id": request_id, "result": result})
        if method == "tools/list":
            return dumped({"jsonrpc": "2.0", "id": request_id, "result": await self._aggregate_listing(era, params)})
        if method == "tools/call":
            tool = params.get("name")
            server, separator, inner = tool.partition(_PREFIX_SEPARATOR) if isinstance(tool, str) else ("", "", "")
            if not separator or server not in self.config.mcp_servers:
                return error_response(
                    request_id, f"no tool {str(tool)[:200]!r} here: tools are named SERVER__TOOL", -32602
                )
            call = {**message, "params": {**params, "name": inner}}
            lane = self.lane(server, era)
            return await lane.exchange(call, self.settings.call_timeout, notified=notified)
        return error_response(
            request_id, f"{method} is served at /servers/NAME/mcp, not at the aggregated endpoint", -32601
        )

    async def _aggregate_handshake(self, era: Era, params: dict[str, Any]) -> dict[str, Any]:
        lanes = [self.lane(name, era) for name in self.config.mcp_servers]
        await asyncio.gather(*(lane.wait_ready(self.settings.call_timeout) for lane in lanes))
        result = dict(lanes[0].handshake)
        result["capabilities"] = {"tools": {}}
        info = {"name": "pydantic-lenient-gateway", "version": __version__}
        if era == "legacy":
            result["protocolVersion"] = lanes[0].negotiated(params.get("protocolVersion"))
            result["serverInfo"] = info
            result.pop("instructions", None)
        else:
            result["supportedVersions"] = [MODERN_VERSION]
            meta = result.get("_meta")
            result["_meta"] = {**(meta if isinstance(meta, dict) else {}), "io.modelcontextprotocol/serverInfo": info}
        return result

    async def _aggregate_listing(self, era: Era, params: dict[str, Any]) -> dict[str, Any]:
        names = list(self.config.mcp_servers)
        listings = await asyncio.gather(*(self._listing(name, era, params) for name in names), return_exceptions=True)
        tools: list[Any] = []
        envelope: dict[str, Any] = {}
        for name, listing in zip(names, listings, strict=True):
            if isinstance(listing, BaseException):
                logger.warning("the aggregated listing leaves out `%s`: %s", name, listing)
                continue
            page_envelope, page_tools = listing
            envelope = envelope or page_envelope
            tools.extend(
                {**tool, "name": f"{name}{_PREFIX_SEPARATOR}{tool['name']}"}
                for tool in page_tools
                if isinstance(tool, dict) and isinstance(tool.get("name"), str)
            )
        return {**envelope, "tools": tools}

    async def _listing(self, name: str, era: Era, params: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
        lane = self.lane(name, era)
        tools: list[Any] = []
        envelope: dict[str, Any] = {}
        page_params = {key: value for key, value in params.items() if key != "cursor"}
        for page in range(_MAX_LIST_PAGES):
            request = {"jsonrpc": "2.0", "id": page, "method": "tools/list", "params": page_params}
            answer = parsed(await lane.exchange(request, self.settings.call_timeout))
            result = answer.get("result")
            if not isinstance(result, dict):
                raise LaneUnavailable(f"`{name}` refused tools/list")
            tools.extend(result.get("tools") or [])
            envelope = {key: value for key, value in result.items() if key not in ("tools", "nextCursor")}
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str):
                break
            page_params = {**page_params, "cursor": cursor}
        return envelope, tools


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

    watching = asyncio.ensure_future(_disconnect(request.receive))
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


async def _disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


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
