"""A remote upstream's address and headers: what they may hold, and how they are shown without a secret.

A URL may carry secrets anywhere: in its userinfo (``user:password@``), its query (``?key=…``) and
its path (``/mcp/s/TOKEN/mcp`` is a common pattern). So a URL is shown as its scheme, host and port
only (`shown_url`), and `Redacting` takes every secret out of the log records of the libraries the
proxy calls (httpx2 logs each request's URL at INFO), in each spelling a library may print it: as
given, percent-encoded, form-encoded and decoded. A header value (``--header``, for auth) is a secret
too.

A value an HTTP request cannot carry is refused here, in one line that never echoes it
(`url_problem`, `header_problem`), before anything starts. Standard library only: the command checks
its options before the HTTP client loads.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit

__all__ = ("Redacting", "header_problem", "shown_url", "url_problem")

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110's field name
_FIELD_VALUE = re.compile(r"[\x20-\x7e\t]*")  # what an HTTP/1.1 client sends as given (ASCII, no controls)
_REDACTED = "[redacted]"
_SHORTEST_SECRET = 3  # shorter parts ("mcp", "v1") are words, not secrets, and would blank every message


def shown_url(url: str) -> str:
    """``url`` as errors and logs show it: scheme, host and port, nothing that may be a secret.

    >>> shown_url("https://user:pw@example.com:8443/mcp/s/TOKEN/mcp?key=x")
    'https://example.com:8443'
    >>> shown_url("not a url")
    'the upstream URL'
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "the upstream URL"
    if not parts.scheme or not parts.hostname:
        return "the upstream URL"
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}{f':{port}' if port is not None else ''}"


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a remote upstream (one line, without the URL), or None when it can.

    >>> url_problem("http://127.0.0.1:8000/mcp") is None
    True
    >>> url_problem("http://127.0.0.1:99999/mcp")
    "the URL's host or port cannot be read"
    """
    if any(ord(character) < 0x21 or ord(character) == 0x7F for character in url):
        return "the URL holds a space or a control character"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises for a port out of range)
    except ValueError:
        return "the URL's host or port cannot be read"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http(s) URL"
    return None


def header_problem(name: str, value: str) -> str | None:
    """Why the header ``name: value`` cannot be sent (one line naming the header, never its value),
    or None when it can.

    >>> header_problem("X-Api-Key", "abc") is None
    True
    >>> header_problem("X-Api-Key", "é")
    'the header X-Api-Key: its value must be printable ASCII (no line breaks or control characters)'
    """
    if not _TOKEN.fullmatch(name):
        return "a header name must be a token (ASCII letters, digits and !#$%&'*+-.^_`|~)"
    if not _FIELD_VALUE.fullmatch(value):
        return f"the header {name}: its value must be printable ASCII (no line breaks or control characters)"
    return None


def _spellings(secret: str) -> set[str]:
    """``secret`` as given, and as a library may print it: percent-encoded, form-encoded, decoded."""
    forms = {secret, quote(secret, safe=""), quote(secret), quote(secret, safe="/:@"), quote_plus(secret)}
    forms |= {unquote(secret), unquote_plus(secret)}
    return {form for form in forms if len(form) >= _SHORTEST_SECRET}


def _url_secrets(url: str) -> list[str]:
    """Everything in ``url`` beyond its scheme, host and port: userinfo, path, query, fragment, and
    each of their parts, so that any spelling of any of them is found."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    secrets = [url, parts.path, parts.query, parts.fragment, parts.username or "", parts.password or ""]
    secrets += [segment for segment in parts.path.split("/") if segment]
    for pair in re.split("[&;]", parts.query):
        secrets += pair.partition("=")[::2]
    return secrets


class Redacting(logging.Filter):
    """Takes the secrets of an upstream (its URL beyond scheme, host and port; its header values)
    out of every record it sees, in each spelling (`_spellings`). ``urls``: the URL as given, and as
    the HTTP client writes it (its own percent-encoding, which leaves some characters `quote` encodes).

    >>> Redacting(["http://h/mcp/s/TOKEN/mcp?key=a b"], ["Bearer xyz"]).redacted("GET /mcp/s/TOKEN/mcp?key=a%20b")
    'GET [redacted]?[redacted]=[redacted]'
    """

    def __init__(self, urls: Iterable[str], header_values: Iterable[str]) -> None:
        super().__init__()
        forms: set[str] = set()
        values = list(header_values)
        words = [word for value in values for word in value.split()]  # "Bearer TOKEN": TOKEN alone too
        for secret in [*(part for url in urls for part in _url_secrets(url)), *values, *words]:
            forms |= _spellings(secret)
        # The longest first, so that a secret inside another is not left half-replaced.
        self.secrets: Sequence[str] = sorted(forms, key=len, reverse=True)

    def redacted(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, _REDACTED)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record that cannot be formatted: its arguments may be secrets
            message = str(record.msg)
        redacted = self.redacted(message)
        if redacted != message or record.args:
            record.msg, record.args = redacted, None
        if record.exc_info is not None or record.exc_text:  # a traceback may show the URL: its type only
            error = record.exc_info[1] if record.exc_info else None
            record.msg = f"{record.msg} ({type(error).__name__})" if error is not None else record.msg
            record.exc_info, record.exc_text = None, None
        return True
