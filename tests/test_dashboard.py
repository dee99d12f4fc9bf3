"""The dashboard: its data, its server, and the page itself in a real headless Chromium.

The browser tests need Debian's ``chromium``; they skip without it, unless
PYDANTIC_LENIENT_REQUIRE_CHROMIUM is set (CI sets it), in which case they fail. Screenshots go to
PYDANTIC_LENIENT_ARTIFACTS (default ``tmp/artifacts`` in the checkout).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pydantic_lenient import Normalizer
from pydantic_lenient.cli.main import main
from pydantic_lenient.observe.dashboard import dashboard_data, make_server, render_html
from pydantic_lenient.observe.failures import FieldFailure
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.observe.stats_file import load_outcomes
from tests.conftest import CHROMIUM, require_external

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ARTIFACTS = Path(
    os.environ.get("PYDANTIC_LENIENT_ARTIFACTS", Path(__file__).resolve().parent.parent / "tmp" / "artifacts")
)
HOSTILE_TOOL = '<img src=x onerror="document.title=1">'

LIMIT = FieldFailure("limit", "int_type", "digit string")
OLD_STR = FieldFailure("old_str", "unknown_parameter", "unknown parameter `old_str`")
OLD_TEXT = FieldFailure("old_text", "missing", "missing parameter `old_text`")


def fill_log_dir(log_dir: Path) -> None:
    """Known figures: 9 calls (4 ok, 4 refused, 1 failed), 3 patterns, 2 normalized calls."""
    normalizer = Normalizer.from_file(EXAMPLES / "fs_rules.json")
    recorder = OutcomeRecorder(log_dir, normalizer=normalizer, flush_every=3600)
    normalizer.apply("edit_file", {"path": "a", "old_str": "a", "new_str": "b"})
    normalizer.apply("edit_file", {"path": "a", "old_text": "a", "new_text": "b", "dry_run": "true"})
    normalizer.apply("search_files", {"pattern": "x"})
    for _ in range(3):
        recorder.record("search", "ok", 2.0)
        recorder.record("search", "refused", 1.0, failures=(LIMIT,))
    recorder.record("edit_file", "refused", 1.0, failures=(OLD_STR, OLD_TEXT))
    recorder.record("edit_file", "error", 5.0)
    recorder.record(HOSTILE_TOOL, "ok", 1.0, norms=("edit-old_str",))
    recorder.close()


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    fill_log_dir(tmp_path / "logs")
    return tmp_path / "logs"


# --- Without a browser -----------------------------------------------------------------------


def test_data_holds_the_stats_the_feed_and_the_suggestions(log_dir: Path) -> None:
    data = dashboard_data(log_dir)
    assert data["outcomes"] == json.loads(load_outcomes(log_dir).model_dump_json())
    assert [entry["tool"] for entry in data["recent"]][-2:] == ["edit_file", HOSTILE_TOOL]
    assert data["rules"]["rules"] == [
        {"id": "search-limit-int", "tools": ["search"], "type": "type_coerce", "from": "limit", "coerce_to": "int"}
    ]
    assert next(entry["rule"] for entry in dashboard_data(log_dir, min_count=1)["suggestions"])["type"] == "param_alias"


def test_the_page_embeds_data_as_inert_json() -> None:
    hostile = {"tool": "</script><script>alert(1)</script>", "line": "\u2028", "amp": "&lt;"}
    page = render_html(hostile)
    start = page.index('<script id="dashboard-data" type="application/json">') + len(
        '<script id="dashboard-data" type="application/json">'
    )
    embedded = page[start : page.index("</script>", start)]
    assert json.loads(embedded) == hostile
    assert "<" not in embedded
    assert "&" not in embedded
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page


def _get(url: str) -> tuple[int, str, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode("utf-8"), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8"), dict(error.headers)


@pytest.fixture
def serve() -> Iterator[Callable[[Path], str]]:
    servers: list[Any] = []

    def start(directory: Path) -> str:
        server = make_server(directory, port=0)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        host, port = server.server_address[:2]
        return f"http://{host!s}:{port}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_the_server_listens_on_loopback_and_reads_the_directory_live(
    log_dir: Path, serve: Callable[[Path], str]
) -> None:
    url = serve(log_dir)
    assert url.startswith("http://127.0.0.1:")
    status, page, headers = _get(url)
    assert status == 200
    assert "Error Patterns" in page
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    before = json.loads(_get(url + "data.json")[1])
    recorder = OutcomeRecorder(log_dir, flush_every=3600)
    recorder.record("search", "ok", 1.0)
    recorder.close()
    after = json.loads(_get(url + "data.json")[1])
    calls = {tool["tool"]: tool["ok"] for tool in after["outcomes"]["tools"]}
    assert calls["search"] == 1 + {tool["tool"]: tool["ok"] for tool in before["outcomes"]["tools"]}["search"]
    assert _get(url + "elsewhere")[0] == 404


def test_a_corrupt_directory_is_an_error_on_the_page_and_in_the_command(
    log_dir: Path, serve: Callable[[Path], str], capsys: pytest.CaptureFixture[str]
) -> None:
    (log_dir / "outcomes.json").write_text('{"format": "pydantic-lenient-outcomes", "version": 1, "tools": [', "utf-8")
    status, body, _ = _get(serve(log_dir) + "data.json")
    assert status == 500
    assert "outcomes.json" in json.loads(body)["error"]
    assert main(["dashboard", str(log_dir), "--html", str(log_dir.parent / "page.html")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "outcomes.json" in error
    assert not (log_dir.parent / "page.html").exists()


# --- In Chromium -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    require_external(CHROMIUM)
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path is not None
    return path


def run_chromium(chromium: str, profile: Path, url: str, *options: str) -> str:
    """Load ``url`` headless and return what Chromium printed (``--dump-dom``: the DOM after scripts ran)."""
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",  # lets the page's fetch of data.json finish first
        "--window-size=1280,1000",
        *options,
        url,
    ]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return completed.stdout


class Dom(HTMLParser):
    """The text of each element with an id, and the cell texts of each table row with a data attribute."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.text_by_id: dict[str, str] = {}
        self.rows: dict[str, list[list[str]]] = {}
        self.tags: list[str] = []
        self._open: list[tuple[str, str | None, list[str]]] = []
        self._row: tuple[str, list[list[str]]] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag in {"meta", "br", "img", "input", "link", "hr"}:
            return
        attributes = dict(attrs)
        self._open.append((tag, attributes.get("id"), []))
        if tag == "tr":
            kind = next((name for name in ("data-pattern", "data-tool") if name in attributes), None)
            self._row = (kind, []) if kind else None
        if tag == "td" and self._row is not None:
            self._row[1].append([])

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            open_tag, element_id, parts = self._open.pop()
            if element_id is not None:
                self.text_by_id[element_id] = "".join(parts).strip()
            if self._open:
                self._open[-1][2].extend(parts)
            if open_tag == tag:
                break
        if tag == "tr" and self._row is not None:
            kind, cells = self._row
            self.rows.setdefault(kind, []).append(["".join(cell).strip() for cell in cells])
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1][2].append(data)
        if self._row is not None and self._row[1] and self._open and self._open[-1][0] != "title":
            self._row[1][-1].append(data)


def check_figures(dom: Dom, log_dir: Path) -> None:
    """The figures on the page are the saved stats'."""
    stats = load_outcomes(log_dir)
    ok, refused, error = (sum(getattr(tool, status) for tool in stats.tools) for status in ("ok", "refused", "error"))
    assert (ok, refused, error) == (4, 4, 1)  # what fill_log_dir recorded
    assert dom.text_by_id["calls-total"] == str(ok + refused + error)
    assert dom.text_by_id["calls-ok"] == str(ok)
    assert dom.text_by_id["calls-refused"] == str(refused)
    assert dom.text_by_id["calls-error"] == str(error)
    normalizer = stats.normalizer or {}
    assert dom.text_by_id["norm-processed"] == str(normalizer["total_processed"]) == "3"
    assert dom.text_by_id["norm-normalized"] == str(normalizer["total_normalized"]) == "2"
    shown = {tuple(cells[:5]) for cells in dom.rows["data-pattern"]}
    saved = {(p.tool, p.param, p.error_type, p.shape, str(p.count)) for p in stats.patterns}
    assert shown == saved
    tools = {cells[0]: cells[1:5] for cells in dom.rows["data-tool"]}
    assert tools["search"] == ["6", "3", "3", "0"]
    assert tools[HOSTILE_TOOL] == ["1", "1", "0", "0"]  # shown as text
    assert "img" not in dom.tags  # and never as markup
    assert dom.text_by_id["patterns-count"] == str(len(stats.patterns))
    assert '"coerce_to": "int"' in dom.text_by_id["rules-json"]
    assert "type_coerce" in dom.text_by_id["suggestions"]


def test_the_static_page_in_chromium(chromium: str, log_dir: Path, tmp_path: Path) -> None:
    page = tmp_path / "dashboard.html"
    assert main(["dashboard", str(log_dir), "--html", str(page)]) == 0
    dom = Dom(run_chromium(chromium, tmp_path / "profile", page.as_uri(), "--dump-dom"))
    check_figures(dom, log_dir)
    assert dom.text_by_id["status"].startswith("snapshot of ")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / "dashboard-patterns.png"
    screenshot.unlink(missing_ok=True)
    run_chromium(chromium, tmp_path / "profile-shot", page.as_uri() + "#patterns", f"--screenshot={screenshot}")
    assert screenshot.read_bytes().startswith(b"\x89PNG")


def test_the_served_page_in_chromium_reads_the_directory_live(
    chromium: str, log_dir: Path, tmp_path: Path, serve: Callable[[Path], str]
) -> None:
    url = serve(log_dir)
    dom = Dom(run_chromium(chromium, tmp_path / "profile", url, "--dump-dom"))
    check_figures(dom, log_dir)
    assert dom.text_by_id["status"].startswith("live, updated ")
    recorder = OutcomeRecorder(log_dir, flush_every=3600)
    recorder.record("search", "error", 1.0)
    recorder.close()
    again = Dom(run_chromium(chromium, tmp_path / "profile-again", url, "--dump-dom"))
    assert again.text_by_id["calls-error"] == "2"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / "dashboard-normalizer.png"
    screenshot.unlink(missing_ok=True)
    run_chromium(chromium, tmp_path / "profile-shot", url, f"--screenshot={screenshot}")
    assert screenshot.read_bytes().startswith(b"\x89PNG")
