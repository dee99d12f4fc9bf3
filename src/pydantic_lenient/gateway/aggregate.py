"""The aggregated endpoint (``POST /mcp``): every server of the config at once, each tool listed
as ``SERVER__TOOL``, its calls sent to that server's shared lane."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from pydantic_lenient._version import __version__
from pydantic_lenient.proxy.messages import dumped, parsed

from .eras import MODERN_VERSION, Era
from .lanes import Lane, LaneUnavailable, Notified, error_response

__all__ = ("PREFIX_SEPARATOR", "Aggregate")

logger = logging.getLogger("pydantic_lenient.gateway")

PREFIX_SEPARATOR = "__"
_MAX_LIST_PAGES = 20  # pages of one server's tools/list the aggregated endpoint follows


class Aggregate:
    """The servers ``names``, each reached through ``lane(name, era)``, as one server."""

    def __init__(self, names: Sequence[str], lane: Callable[[str, Era], Lane], call_timeout: float) -> None:
        self.names = tuple(names)
        self.lane = lane
        self.call_timeout = call_timeout

    async def answer(self, message: dict[str, Any], era: Era, notified: Notified | None) -> bytes:
        """The answer to ``message`` (a request with an id) at the aggregated endpoint."""
        method, request_id = message["method"], message["id"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        if method in ("initialize", "server/discover"):
            result = await self._handshake(era, params)
            return dumped({"jsonrpc": "2.0", "id": request_id, "result": result})
        if method == "tools/list":
            return dumped({"jsonrpc": "2.0", "id": request_id, "result": await self._listing_of_all(era, params)})
        if method == "tools/call":
            tool = params.get("name")
            server, separator, inner = tool.partition(PREFIX_SEPARATOR) if isinstance(tool, str) else ("", "", "")
            if not separator or server not in self.names:
                return error_response(
                    request_id, f"no tool {str(tool)[:200]!r} here: tools are named SERVER__TOOL", -32602
                )
            call = {**message, "params": {**params, "name": inner}}
            lane = self.lane(server, era)
            return await lane.exchange(call, self.call_timeout, notified=notified)
        return error_response(
            request_id, f"{method} is served at /servers/NAME/mcp, not at the aggregated endpoint", -32601
        )

    async def _handshake(self, era: Era, params: dict[str, Any]) -> dict[str, Any]:
        lanes = [self.lane(name, era) for name in self.names]
        await asyncio.gather(*(lane.wait_ready(self.call_timeout) for lane in lanes))
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

    async def _listing_of_all(self, era: Era, params: dict[str, Any]) -> dict[str, Any]:
        names = list(self.names)
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
                {**tool, "name": f"{name}{PREFIX_SEPARATOR}{tool['name']}"}
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
            answer = parsed(await lane.exchange(request, self.call_timeout))
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
