"""The HTTP stack's loggers, each with a filter that takes a remote upstream's secrets out of its
records (httpx2 logs every request's URL at INFO): used by `pydantic_lenient.proxy.remote`."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import httpx2

from .addresses import Redacting

__all__ = ("redact_http_logs", "redacting_for", "stop_redacting_http_logs")

_HTTP_LOGGERS = (
    "httpx2",
    "httpcore2",
    "httpcore2.connection",
    "httpcore2.http11",
    "httpcore2.http2",
    "httpcore2.proxy",
    "httpcore2.socks",
)


def redacting_for(url: str, header_values: Iterable[str]) -> Redacting:
    """A filter taking ``url``'s secrets and the header values out of a record, in the spelling given
    and in httpx2's own (its percent-encoding)."""
    return Redacting([url, *_as_sent(url)], header_values)


def redact_http_logs(redacting: Redacting) -> None:
    for name in _HTTP_LOGGERS:
        logging.getLogger(name).addFilter(redacting)


def stop_redacting_http_logs(redacting: Redacting) -> None:
    for name in _HTTP_LOGGERS:
        logging.getLogger(name).removeFilter(redacting)


def _as_sent(url: str) -> list[str]:
    """``url`` as httpx2 writes it in its log records (its own percent-encoding), if it can read it."""
    try:
        return [str(httpx2.URL(url))]
    except Exception:
        return []
