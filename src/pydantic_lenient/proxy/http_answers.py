"""What an HTTP answer from a Streamable HTTP server means for the request it carried: the reasons a
request's answer cannot come (`Unanswerable`, with the JSON-RPC code the official SDK's client uses
for each case), a body read within a bound, a redirect named without secrets. Used by
`pydantic_lenient.proxy.remote`."""

from __future__ import annotations

import io
import re
from typing import Any

import httpx2

from .addresses import shown_url
from .messages import exact, members, parsed

__all__ = (
    "CONNECTION_CLOSED",
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "MAX_ERROR_BODY",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "Unanswerable",
    "bounded_body",
    "content_type_of",
    "message_of",
    "redirect_reason",
)

PARSE_ERROR = -32700  # the codes the official SDK's client answers each case with
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
CONNECTION_CLOSED = -32000
MAX_ERROR_BODY = 1024 * 1024  # an HTTP error's body: a JSON-RPC error is small
_DIGITS = re.compile(r"[0-9]{1,18}")


class Unanswerable(Exception):
    """The request's answer cannot come: why (one line, no secret), and the JSON-RPC code to say it with."""

    def __init__(self, reason: str, code: int = CONNECTION_CLOSED) -> None:
        super().__init__(reason)
        self.code = code


async def bounded_body(response: httpx2.Response, limit: int) -> bytes:
    """The whole body, decompressed, or `Unanswerable` once it is over ``limit`` bytes."""
    declared = response.headers.get("content-length", "")
    if _DIGITS.fullmatch(declared) and int(declared) > limit and not response.headers.get("content-encoding"):
        raise Unanswerable(f"answered with a body over {limit} bytes", INTERNAL_ERROR)
    body = io.BytesIO()
    async for chunk in response.aiter_bytes():  # httpx2 decompresses a piece at a time
        body.write(chunk)
        if body.tell() > limit:
            raise Unanswerable(f"answered with a body over {limit} bytes", INTERNAL_ERROR)
    return body.getvalue()


def redirect_reason(response: httpx2.Response) -> str:
    """A redirect is not followed (the user's headers would go where they did not say): the
    location, shown without secrets, for the user to use."""
    status = response.status_code
    location = response.headers.get("location")
    if location is None:
        return f"answered HTTP {status} without a location"
    try:
        target = response.request.url.join(location)
    except Exception:
        return f"answered HTTP {status} with a location that cannot be read"
    here = response.request.url
    if (target.scheme, target.host, target.port) == (here.scheme, here.host, here.port):
        if target.path == here.path + "/":
            return f"answered HTTP {status}: the URL redirects to itself with a trailing slash: use that URL"
        if target.path + "/" == here.path:
            return f"answered HTTP {status}: the URL redirects to itself without its trailing slash: use that URL"
        return f"answered HTTP {status}: the URL redirects to another path on the same server: use that URL"
    return f"answered HTTP {status}: the URL redirects to {shown_url(str(target))}: use that URL"


def message_of(body: bytes) -> dict[str, Any]:
    """The JSON object ``body`` holds (its top-level members when too deep to parse), or {}."""
    message = parsed(body)
    if not message:
        value = exact(body).value
        message = value if isinstance(value, dict) else members(body)
    return message


def content_type_of(response: httpx2.Response) -> str:
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()
