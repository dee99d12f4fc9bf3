"""A web page over a log directory that leads with what to fix: the ranked error patterns, each with
its suggested rule or annotation, and the rules file to copy; then the calls and the normalizer.

    pydantic-lenient dashboard LOG_DIR                 # http://127.0.0.1:8765/TOKEN/, reading LOG_DIR live
    pydantic-lenient dashboard LOG_DIR --html out.html # the same page as one self-contained file

The page (``dashboard.html`` in this package) is static HTML and JavaScript with no outside
resource. Served, it reads ``/data.json`` every few seconds; written with `render_html`, the data
is embedded in the file. Everything from the log directory is shown as text, never as markup.

Served, it answers only a request whose ``Host`` is an IP address or ``localhost`` with its own
port (a page that rebinds its own name to 127.0.0.1 sends its name), under a path holding a token
made for this run (as Jupyter does: another site cannot guess it), with no CORS header; idle
connections are closed after ``idle_timeout`` seconds. The data it sends is bounded (`PAGE_ROWS`
rows a table, `PAGE_HOURS` hours a chart), whatever the log directory holds.

Its charts share one window of whole hours (`MIN_WINDOW_HOURS` to `PAGE_HOURS`), ending at the
current hour, with every hour in it, so a chart shows a trend even when one hour holds all the data.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple, cast

from .fleet import fleet_audit_log, fleet_outcomes
from .logdir import LogDirError
from .stats_file import CLIENTS_PER_PATTERN
from .suggestions import Suggestion, rules_document, suggest

__all__ = (
    "DEFAULT_HOST",
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_PORT",
    "MIN_WINDOW_HOURS",
    "PAGE_HOURS",
    "PAGE_ROWS",
    "DashboardServer",
    "dashboard_data",
    "make_server",
    "render_html",
)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_IDLE_TIMEOUT = 10.0
"""Seconds a connection may stay silent before the server closes it (and frees its thread)."""
PAGE_ROWS = 500
"""Rows the data sends at most for each table: the most counted patterns, tools and pairs."""
PAGE_HOURS = 168
"""Hourly buckets the data sends at most for each chart: the latest."""
MIN_WINDOW_HOURS = 24
"""Hours the charts' window spans at least, whatever the log directory holds."""
_HOUR = 3600.0
_DATA_MARKER = "/*DASHBOARD-DATA*/null"
# The page's own policy: its inline script and style, requests to its own origin, nothing else.
_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:"


def dashboard_data(log_dir: str | os.PathLike[str], *, min_count: int = 3, recent: int = 100) -> dict[str, Any]:
    """What the page shows: the ranked error patterns with their fixes (``fixes``, each broken down
    by client), the calls per hour over the charts' window (``window``, ``trend``), the saved
    outcomes (calls by tool and by client), the latest audit entries and the suggestions. A parent
    of many replicas' directories (the gateway's ``logDir``) is read as one (`fleet_outcomes`).

    Raises `LogDirError`, naming the file, for a log directory that cannot be read.
    """
    stats = fleet_outcomes(log_dir)
    suggestions = suggest(stats, min_count=min_count)
    generated_at = time.time()
    outcomes = _bounded(stats.model_dump(mode="json"))
    window = _window(outcomes, generated_at)
    return {
        "log_dir": str(log_dir),
        "generated_at": generated_at,
        "window": {"start": window.start, "hours": window.hours},
        "trend": [
            {"start": start, "ok": ok, "refused": refused, "error": error}
            for start, ok, refused, error in zip(
                window.starts(),
                *(window.counts(outcomes["hourly"], status) for status in ("ok", "refused", "error")),
                strict=True,
            )
        ],
        "fixes": _fixes(outcomes["patterns"], suggestions, window),
        "outcomes": outcomes,
        "recent": [entry.model_dump(mode="json") for entry in fleet_audit_log(log_dir, limit=recent)],
        "suggestions": [_suggestion_data(suggestion) for suggestion in suggestions],
        "rules": rules_document(suggestions),
        "min_count": min_count,
    }


def _suggestion_data(suggestion: Suggestion) -> dict[str, Any]:
    return {
        "kind": suggestion.kind,
        "tool": suggestion.tool,
        "param": suggestion.param,
        "evidence": suggestion.evidence,
        "reason": suggestion.reason,
        "text": str(suggestion),
        "rule": suggestion.rule,
        "annotation": suggestion.annotation,
        "replacement": suggestion.replacement,
    }


class _Window(NamedTuple):
    """The charts' hours: ``hours`` buckets from ``start``, one an hour."""

    start: float
    hours: int

    def starts(self) -> list[float]:
        return [self.start + index * _HOUR for index in range(self.hours)]

    def counts(self, buckets: list[dict[str, Any]], key: str) -> list[int]:
        """``buckets``' ``key`` by hour of the window, zero where no bucket is; buckets outside it are left out."""
        counts = [0] * self.hours
        for bucket in buckets:
            # Floor division, not (start - self.start) / _HOUR: exact for any float start, even 1e20.
            index = int((float(bucket["start"]) - self.start) // _HOUR)
            if 0 <= index < self.hours:
                counts[index] += int(bucket.get(key, 0))
        return counts


def _window(outcomes: dict[str, Any], now: float) -> _Window:
    """From the first recorded hour (at least `MIN_WINDOW_HOURS`, at most `PAGE_HOURS` back) to the
    current hour, or to the latest recorded one if that is later (a clock set back)."""
    starts = [float(bucket["start"]) for bucket in outcomes["hourly"]]
    starts += [float(bucket["start"]) for pattern in outcomes["patterns"] for bucket in pattern["hourly"]]
    end = max([now // _HOUR * _HOUR, *starts])
    first = min(starts, default=end)
    hours = min(PAGE_HOURS, max(MIN_WINDOW_HOURS, int((end - first) // _HOUR) + 1))
    return _Window(end - (hours - 1) * _HOUR, hours)


def _fixes(patterns: list[dict[str, Any]], suggestions: list[Suggestion], window: _Window) -> list[dict[str, Any]]:
    """The error patterns, most refused first (then most recent), each with the index in
    ``suggestions`` of the rule or annotation that fixes it (``null`` when none is suggested yet),
    its refusals by hour of the window, and by the client that sent them (most first)."""

    def fixes(suggestion: Suggestion, pattern: dict[str, Any]) -> bool:
        if suggestion.tool != pattern["tool"]:
            return False
        # An alias fixes both sides of the pair: the unknown name sent and the missing name it meant.
        names = {suggestion.param, (suggestion.rule or {}).get("to")}
        return pattern["param"] in names

    ranked = sorted(patterns, key=lambda pattern: (-pattern["count"], -pattern["last_seen"]))
    return [
        {
            "tool": pattern["tool"],
            "param": pattern["param"],
            "error_type": pattern["error_type"],
            "shape": pattern["shape"],
            "count": pattern["count"],
            "first_seen": pattern["first_seen"],
            "last_seen": pattern["last_seen"],
            "hourly": window.counts(pattern["hourly"], "count"),
            "clients": [
                {"client": name, "count": count}
                for name, count in sorted(pattern["clients"].items(), key=lambda item: (-item[1], item[0]))[
                    :CLIENTS_PER_PATTERN
                ]
            ],
            "suggestion": next(
                (index for index, suggestion in enumerate(suggestions) if fixes(suggestion, pattern)), None
            ),
        }
        for pattern in ranked
    ]


def _bounded(outcomes: dict[str, Any]) -> dict[str, Any]:
    """``outcomes`` with at most `PAGE_ROWS` rows a table and `PAGE_HOURS` buckets a chart, so the
    page stays responsive on any file that passes validation."""

    def latest(buckets: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(buckets, key=lambda bucket: float(bucket["start"]))[-PAGE_HOURS:]

    def most(rows: list[dict[str, Any]], count: Any) -> list[dict[str, Any]]:
        return sorted(rows, key=count, reverse=True)[:PAGE_ROWS]

    patterns = most(outcomes["patterns"], lambda pattern: pattern["count"])
    for pattern in patterns:
        pattern["hourly"] = latest(pattern["hourly"])
    normalizer = outcomes["normalizer"]
    if isinstance(normalizer, dict):
        for key in ("by_tool", "by_rule"):
            if isinstance(normalizer.get(key), dict):
                normalizer[key] = dict(list(normalizer[key].items())[:PAGE_ROWS])
        if isinstance(normalizer.get("recent_normalizations"), list):
            normalizer["recent_normalizations"] = normalizer["recent_normalizations"][-PAGE_ROWS:]
    return {
        **outcomes,
        "tools": most(outcomes["tools"], lambda tool: tool["ok"] + tool["refused"] + tool["error"]),
        "clients": most(outcomes["clients"], lambda client: client["ok"] + client["refused"] + client["error"]),
        "hourly": latest(outcomes["hourly"]),
        "patterns": patterns,
        "aliases": most(outcomes["aliases"], lambda alias: alias["count"]),
        "annotations": outcomes["annotations"][:PAGE_ROWS],
    }


def _page() -> str:
    return resources.files(__package__).joinpath("dashboard.html").read_text(encoding="utf-8")


def _script_json(data: Any) -> str:
    """JSON text that is safe inside a ``<script>`` element, whatever strings it holds."""
    text = json.dumps(data, ensure_ascii=False)
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def render_html(data: dict[str, Any] | None = None) -> str:
    """The page; with ``data`` (from `dashboard_data`) embedded, it needs no server."""
    page = _page()
    if _DATA_MARKER not in page:  # pragma: no cover - the asset ships with the package
        raise RuntimeError("dashboard.html has lost its data marker")
    return page.replace(_DATA_MARKER, _script_json(data) if data is not None else "null", 1)


class DashboardServer(ThreadingHTTPServer):
    """The dashboard's HTTP server; `url` is the address to open, token included."""

    daemon_threads = True
    token: str

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        name = f"[{host!s}]" if ":" in str(host) else str(host)
        return f"http://{name}:{port}/{self.token}/"


def _host_allowed(header: str | None, port: int) -> bool:
    """Whether a request's ``Host`` names this server: an IP address or ``localhost``, with its port.

    A DNS-rebinding page reaches 127.0.0.1 under its own name, which this refuses.
    """
    if not header:
        return False
    name, colon, given_port = header.rpartition(":")
    if not colon or given_port != str(port):
        return False
    if name.lower() == "localhost":
        return True
    try:
        ipaddress.ip_address(name[1:-1] if name.startswith("[") and name.endswith("]") else name)
    except ValueError:
        return False
    return True


def make_server(
    log_dir: str | os.PathLike[str],
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    min_count: int = 3,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
) -> DashboardServer:
    """An HTTP server for the page (``/TOKEN/``) and its data (``/TOKEN/data.json``, read from
    ``log_dir`` on every request), ``TOKEN`` made for this server. Call ``serve_forever()`` and
    open ``server.url``; port 0 picks a free port."""
    directory = Path(log_dir)
    page = render_html().encode("utf-8")
    lock = threading.Lock()
    token = secrets.token_urlsafe(24)
    pages = {f"/{token}/", f"/{token}/index.html"}
    data_path = f"/{token}/data.json"

    class Handler(BaseHTTPRequestHandler):
        server_version = "pydantic-lenient"
        timeout = idle_timeout  # the socket's: a silent connection ends, and so does its thread

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if not _host_allowed(self.headers.get("Host"), cast(DashboardServer, self.server).server_address[1]):
                self._send(HTTPStatus.FORBIDDEN, "text/plain; charset=utf-8", b"unknown host\n")
            elif path in pages:
                self._send(HTTPStatus.OK, "text/html; charset=utf-8", page)
            elif path == data_path:
                try:
                    with lock:  # one reader of the directory at a time
                        body: dict[str, Any] = dashboard_data(directory, min_count=min_count)
                    status = HTTPStatus.OK
                except LogDirError as error:
                    body, status = {"error": str(error)}, HTTPStatus.INTERNAL_SERVER_ERROR
                self._send(status, "application/json", json.dumps(body, ensure_ascii=False).encode("utf-8"))
            else:
                self._send(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", b"not found\n")

        def _send(self, status: HTTPStatus, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Security-Policy", _CSP)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")  # the token stays out of other sites' logs
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a page polling every few seconds would flood the terminal

    server = DashboardServer((host, port), Handler)
    server.token = token
    return server
