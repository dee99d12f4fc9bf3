"""A web page over a log directory: the Normalizer and Error Patterns views.

    pydantic-lenient dashboard LOG_DIR                 # http://127.0.0.1:8765/, reading LOG_DIR live
    pydantic-lenient dashboard LOG_DIR --html out.html # the same page as one self-contained file

The page (``dashboard.html`` in this package) is static HTML and JavaScript with no outside
resource. Served, it reads ``/data.json`` every few seconds; written with `render_html`, the data
is embedded in the file. Everything from the log directory is shown as text, never as markup.
"""

from __future__ import annotations

import json
import os
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from .auditlog import read_audit_log
from .logdir import LogDirError
from .stats_file import load_outcomes
from .suggestions import rules_document, suggest

__all__ = ("DEFAULT_HOST", "DEFAULT_PORT", "dashboard_data", "make_server", "render_html")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
_DATA_MARKER = "/*DASHBOARD-DATA*/null"
# The page's own policy: its inline script and style, requests to its own origin, nothing else.
_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:"


def dashboard_data(log_dir: str | os.PathLike[str], *, min_count: int = 3, recent: int = 100) -> dict[str, Any]:
    """What the page shows: the saved outcomes, the latest audit entries and the suggestions.

    Raises `LogDirError`, naming the file, for a log directory that cannot be read.
    """
    stats = load_outcomes(log_dir)
    suggestions = suggest(stats, min_count=min_count)
    return {
        "log_dir": str(log_dir),
        "generated_at": time.time(),
        "outcomes": stats.model_dump(mode="json"),
        "recent": [entry.model_dump(mode="json") for entry in read_audit_log(log_dir, limit=recent)],
        "suggestions": [
            {
                "kind": suggestion.kind,
                "tool": suggestion.tool,
                "param": suggestion.param,
                "evidence": suggestion.evidence,
                "reason": suggestion.reason,
                "text": str(suggestion),
                "rule": suggestion.rule,
            }
            for suggestion in suggestions
        ],
        "rules": rules_document(suggestions),
        "min_count": min_count,
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


def make_server(
    log_dir: str | os.PathLike[str], *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, min_count: int = 3
) -> ThreadingHTTPServer:
    """An HTTP server for the page (``/``) and its data (``/data.json``, read from ``log_dir`` on
    every request). Call ``serve_forever()``; port 0 picks a free port (``server.server_address``)."""
    directory = Path(log_dir)
    page = render_html().encode("utf-8")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        server_version = "pydantic-lenient"

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path in ("/", "/index.html"):
                self._send(HTTPStatus.OK, "text/html; charset=utf-8", page)
            elif path == "/data.json":
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
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # a page polling every few seconds would flood the terminal

    return ThreadingHTTPServer((host, port), Handler)
