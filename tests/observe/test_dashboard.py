"""The dashboard: its data, its server, and the page itself in a real headless Chromium.

The browser tests need Debian's ``chromium``; they skip without it, unless
PYDANTIC_LENIENT_REQUIRE_CHROMIUM is set (CI sets it), in which case they fail. Screenshots go to
PYDANTIC_LENIENT_ARTIFACTS (default ``tmp/artifacts`` in the checkout).
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from pydantic_lenient import Normalizer
from pydantic_lenient.cli.main import main
from pydantic_lenient.observe.clients import Client
from pydantic_lenient.observe.dashboard import (
    MIN_WINDOW_HOURS,
    PAGE_HOURS,
    PAGE_ROWS,
    dashboard_data,
    make_server,
    render_html,
)
from pydantic_lenient.observe.failures import FieldFailure
from pydantic_lenient.observe.recorder import OutcomeRecorder
from pydantic_lenient.observe.stats_file import load_outcomes
from tests.conftest import CHROMIUM, require_external

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ARTIFACTS = Path(
    os.environ.get("PYDANTIC_LENIENT_ARTIFACTS", Path(__file__).resolve().parents[2] / "tmp" / "artifacts")
)
HOSTILE_TOOL = '<img src=x onerror="document.title=1">'

LIMIT = FieldFailure("limit", "int_type", "digit string")
OLD_STR = FieldFailure("old_str", "unknown_parameter", "unknown parameter `old_str`")
OLD_TEXT = FieldFailure("old_text", "missing", "missing parameter `old_text`")
CURSOR = Client("cursor-vscode", "1.7.2")
CLAUDE_CODE = Client("claude-code", "2.1.0")


def fill_log_dir(log_dir: Path) -> None:
    """Known figures: 9 calls (4 ok, 4 refused, 1 failed), 3 patterns, 2 normalized calls; Cursor
    sent the six search calls, Claude Code the two edit_file calls, and the last call named no client."""
    normalizer = Normalizer.from_file(EXAMPLES / "fs_rules.json")
    recorder = OutcomeRecorder(log_dir, normalizer=normalizer, flush_every=3600)
    normalizer.apply("edit_file", {"path": "a", "old_str": "a", "new_str": "b"})
    normalizer.apply("edit_file", {"path": "a", "old_text": "a", "new_text": "b", "dry_run": "true"})
    normalizer.apply("search_files", {"pattern": "x"})
    for _ in range(3):
        recorder.record("search", "ok", 2.0, client=CURSOR)
        recorder.record("search", "refused", 1.0, failures=(LIMIT,), client=CURSOR)
    recorder.record("edit_file", "refused", 1.0, failures=(OLD_STR, OLD_TEXT), client=CLAUDE_CODE)
    recorder.record("edit_file", "error", 5.0, client=CLAUDE_CODE)
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


def test_the_fixes_rank_the_patterns_each_with_its_suggestion(log_dir: Path) -> None:
    data = dashboard_data(log_dir)
    fixes = data["fixes"]
    assert (fixes[0]["tool"], fixes[0]["param"], fixes[0]["count"]) == ("search", "limit", 3)
    assert [fix["count"] for fix in fixes] == sorted((fix["count"] for fix in fixes), reverse=True)
    assert data["suggestions"][fixes[0]["suggestion"]]["rule"]["id"] == "search-limit-int"
    assert [fix["suggestion"] for fix in fixes[1:]] == [None, None]  # one refusal each: below min_count
    # Each pattern's refusals by the client that sent them, and the suggestion says so too.
    assert fixes[0]["clients"] == [{"client": "cursor-vscode", "count": 3}]
    assert data["suggestions"][fixes[0]["suggestion"]]["text"].endswith("; by client: cursor-vscode 3)")
    assert [entry["client"] for entry in data["recent"]][-3:] == [
        {"name": "claude-code", "version": "2.1.0"},
        {"name": "claude-code", "version": "2.1.0"},
        None,
    ]
    # With a lower threshold, the alias fixes both sides of the pair: the name sent and the name meant.
    data = dashboard_data(log_dir, min_count=1)
    by_param = {fix["param"]: data["suggestions"][fix["suggestion"]] for fix in data["fixes"]}
    assert by_param["old_str"]["rule"] == by_param["old_text"]["rule"]
    assert by_param["old_str"]["rule"]["to"] == "old_text"
    assert sum(sum(fix["hourly"]) for fix in data["fixes"]) == 5  # all recorded in the window's last hour


def test_an_empty_log_directory_has_a_full_window_of_zeros(tmp_path: Path) -> None:
    before = time.time()
    data = dashboard_data(tmp_path)
    assert data["fixes"] == []
    assert data["suggestions"] == []
    assert data["window"]["hours"] == MIN_WINDOW_HOURS == len(data["trend"])
    last = data["trend"][-1]["start"]
    assert before - 3600 * 2 < last <= before + 3600  # ending at the current hour
    assert all((hour["ok"], hour["refused"], hour["error"]) == (0, 0, 0) for hour in data["trend"])
    steps = {b["start"] - a["start"] for a, b in zip(data["trend"], data["trend"][1:], strict=False)}
    assert steps == {3600.0}


HOURS_AGO = st.lists(st.tuples(st.integers(0, 400), st.integers(0, 50)), max_size=30, unique_by=lambda pair: pair[0])


@given(hours_ago=HOURS_AGO)
def test_every_hour_in_the_window_is_charted_and_nothing_else(
    tmp_path_factory: pytest.TempPathFactory, hours_ago: list[tuple[int, int]]
) -> None:
    log_dir = tmp_path_factory.mktemp("logs")
    now_hour = time.time() // 3600 * 3600
    hourly = [{"start": now_hour - 3600.0 * ago, "refused": refused} for ago, refused in hours_ago]
    (log_dir / "outcomes.json").write_text(json.dumps({"hourly": hourly}), "utf-8")
    data = dashboard_data(log_dir)
    hours = data["window"]["hours"]
    oldest = max((ago for ago, _ in hours_ago), default=0)
    assert hours == min(PAGE_HOURS, max(MIN_WINDOW_HOURS, oldest + 1)) == len(data["trend"])
    if data["trend"][-1]["start"] != now_hour:  # the hour turned during the test
        return
    charted = {now_hour - hour["start"]: hour["refused"] for hour in data["trend"]}
    for ago, refused in hours_ago:
        assert charted.get(3600.0 * ago, 0) == (refused if ago < hours else 0)
    assert sum(charted.values()) == sum(refused for ago, refused in hours_ago if ago < hours)


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
        url: str = server.url
        return url

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
    assert "What to fix" in page
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    before = json.loads(_get(url + "data.json")[1])
    recorder = OutcomeRecorder(log_dir, flush_every=3600)
    recorder.record("search", "ok", 1.0)
    recorder.close()
    after = json.loads(_get(url + "data.json")[1])
    calls = {tool["tool"]: tool["ok"] for tool in after["outcomes"]["tools"]}
    assert calls["search"] == 1 + {tool["tool"]: tool["ok"] for tool in before["outcomes"]["tools"]}["search"]
    assert _get(url + "elsewhere")[0] == 404
    assert _get(url.rsplit("/", 2)[0] + "/data.json")[0] == 404  # without the token


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
            kind = next((name for name in ("data-pattern", "data-tool", "data-client") if name in attributes), None)
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
    shown = {tuple(cells[1:6]) for cells in dom.rows["data-pattern"]}
    saved = {(p.tool, p.param, p.error_type, p.shape, str(p.count)) for p in stats.patterns}
    assert shown == saved
    tools = {cells[0]: cells[1:5] for cells in dom.rows["data-tool"]}
    assert tools["search"] == ["6", "3", "3", "0"]
    assert tools[HOSTILE_TOOL] == ["1", "1", "0", "0"]  # shown as text
    # By client: the calls, and each pattern's refusals, of the host that sent them.
    clients = {cells[0]: cells[1:] for cells in dom.rows["data-client"]}
    assert clients == {
        "cursor-vscode": ["1.7.2", "cursor", "6", "3", "3", "0", "0"],
        "claude-code": ["2.1.0", "claude-code", "2", "0", "1", "1", "0"],
    }
    by_client = {cells[2]: cells[-1] for cells in dom.rows["data-pattern"]}
    assert by_client == {"limit": "cursor-vscode 3", "old_str": "claude-code 1", "old_text": "claude-code 1"}
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


# What the page measures of itself in Chromium: appended to a copy of the page, this script shows
# each view in turn (through its tab, with the keyboard) and writes, as JSON in <pre id="audit">:
# the view's first heading and where it is, the contrast of every visible text against the colour
# behind it (WCAG 2 relative luminance), and the elements Tab reaches, in order.
AUDIT_SCRIPT = """
<script>
"use strict";
(function () {
  function rgba(text) {
    const parts = (text.match(/[0-9.]+/g) || []).map(Number);
    return { r: parts[0] || 0, g: parts[1] || 0, b: parts[2] || 0, a: parts.length > 3 ? parts[3] : 1 };
  }
  function luminance(c) {
    const linear = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * linear(c.r) + 0.7152 * linear(c.g) + 0.0722 * linear(c.b);
  }
  function background(node) {
    for (let at = node; at && at.nodeType === 1; at = at.parentElement) {
      const color = rgba(getComputedStyle(at).backgroundColor);
      if (color.a > 0) return color;
    }
    return { r: 255, g: 255, b: 255, a: 1 };
  }
  const visible = (node) => node.getClientRects().length > 0 && getComputedStyle(node).visibility !== "hidden";
  function texts() {
    const found = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const parent = text.parentElement;
      if (!text.data.trim() || !parent || parent.closest("script, title") || !visible(parent)) continue;
      const style = getComputedStyle(parent);
      const color = rgba(parent instanceof SVGElement ? style.fill : style.color);
      const [light, dark] = [luminance(color), luminance(background(parent))].sort((a, b) => b - a);
      found.push({ text: text.data.trim().slice(0, 40), color: style.color, ratio: (light + 0.05) / (dark + 0.05) });
    }
    return found;
  }
  function tabOrder() {
    const selector = "a[href], button:not([disabled]), input, select, textarea, [tabindex]";
    return [...document.querySelectorAll(selector)]
      .filter((node) => node.tabIndex >= 0 && visible(node))
      .map((node) => node.id || node.tagName.toLowerCase());
  }
  function press(key) {
    document.activeElement.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true }));
    return document.activeElement.id;
  }
  const views = {};
  document.getElementById("tab-fix").focus();
  const order = ["tab-fix"];
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    if (tab.id !== document.activeElement.id) order.push(press("ArrowRight"));
    const panel = document.getElementById(tab.getAttribute("aria-controls"));
    const heading = [...panel.querySelectorAll("h2, h3")].find(visible);
    const rect = heading.getBoundingClientRect();
    views[tab.dataset.view] = {
      selected: tab.getAttribute("aria-selected"),
      panel_visible: visible(panel),
      heading: heading.textContent,
      heading_top: rect.top,
      heading_left: rect.left,
      heading_bottom: rect.bottom,
      texts: texts(),
      tab_order: tabOrder(),
    };
  }
  order.push(press("Home"), press("End"), press("ArrowRight"));
  const fixEmpty = document.getElementById("fix-empty");
  const audit = document.createElement("pre");
  audit.id = "audit";
  audit.hidden = true;
  audit.textContent = JSON.stringify({ views, keys: order, fix_empty_shown: !fixEmpty.hidden });
  document.body.appendChild(audit);
})();
</script>
"""


def audit_page(chromium: str, data: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The page with ``data``, as it measures itself in Chromium (`AUDIT_SCRIPT`), the fix view shown again last."""
    page = tmp_path / "audited.html"
    page.write_text(render_html(data).replace("</body>", AUDIT_SCRIPT + "</body>"), "utf-8")
    dom = Dom(run_chromium(chromium, tmp_path / "profile-audit", page.as_uri(), "--dump-dom"))
    audit: dict[str, Any] = json.loads(dom.text_by_id["audit"])
    return audit


def test_the_page_leads_with_what_to_fix_and_the_screenshot_shows_it(
    chromium: str, log_dir: Path, tmp_path: Path
) -> None:
    page = tmp_path / "dashboard.html"
    assert main(["dashboard", str(log_dir), "--html", str(page)]) == 0
    audit = audit_page(chromium, dashboard_data(log_dir), tmp_path)
    fix = audit["views"]["fix"]
    assert fix["heading"] == "What to fix"
    assert fix["heading_top"] < 150  # right under the header, above everything else
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / "dashboard-what-to-fix.png"
    screenshot.unlink(missing_ok=True)
    run_chromium(chromium, tmp_path / "profile-shot", page.as_uri(), f"--screenshot={screenshot}")
    with Image.open(screenshot) as image:
        assert image.size == (1280, 1000)
        pixels = image.convert("L")
        # The header is the dark band on top; the heading's own box holds dark text on the light page.
        assert pixels.getpixel((640, 5)) < 80
        box = pixels.crop((int(fix["heading_left"]), int(fix["heading_top"]), 400, int(fix["heading_bottom"])))
        darkest, lightest = box.getextrema()
        assert darkest < 80
        assert lightest > 230
    # The ranked table's first row holds the most refused pattern: search.limit, 3 refusals.
    shown = Dom(run_chromium(chromium, tmp_path / "profile", page.as_uri(), "--dump-dom")).rows["data-pattern"]
    assert shown[0][:6] == ["1", "search", "limit", "int_type", "digit string", "3"]
    assert "type_coerce: limit → int" in shown[0][6]
    assert [int(cells[0]) for cells in shown] == list(range(1, len(shown) + 1))


def test_every_text_is_readable_in_contrast_in_every_view(chromium: str, log_dir: Path, tmp_path: Path) -> None:
    audit = audit_page(chromium, dashboard_data(log_dir, min_count=1), tmp_path)
    for view, measured in audit["views"].items():
        assert measured["texts"], view
        poor = [
            (text["text"], text["color"], round(text["ratio"], 2)) for text in measured["texts"] if text["ratio"] < 4.5
        ]
        assert poor == [], view


def test_the_keyboard_reaches_every_control(chromium: str, log_dir: Path, tmp_path: Path) -> None:
    audit = audit_page(chromium, dashboard_data(log_dir), tmp_path)
    # Arrows move between the tabs and wrap; Home and End go to the ends.
    assert audit["keys"] == ["tab-fix", "tab-calls", "tab-normalizer", "tab-fix", "tab-normalizer", "tab-fix"]
    for view, measured in audit["views"].items():
        assert measured["selected"] == "true"
        assert measured["panel_visible"]
        order = measured["tab_order"]
        # Tab reaches the selected tab (the others through the arrows), then the view and its controls.
        assert order[:2] == [f"tab-{view}", f"view-{view}"], view
    assert audit["views"]["fix"]["tab_order"][2:] == ["copy-rules", "download-rules", "rules-json"]


def test_the_page_on_an_empty_log_directory(chromium: str, tmp_path: Path, serve: Callable[[Path], str]) -> None:
    empty = tmp_path / "logs"
    empty.mkdir()
    audit = audit_page(chromium, dashboard_data(empty), tmp_path)
    assert audit["fix_empty_shown"]
    assert audit["views"]["fix"]["heading"] == "What to fix"
    url = serve(empty)
    dom = Dom(run_chromium(chromium, tmp_path / "profile", url, "--dump-dom"))
    assert dom.text_by_id["status"].startswith("live, updated ")
    assert dom.text_by_id["patterns-count"] == "0"
    assert dom.text_by_id["calls-total"] == "0"
    assert dom.text_by_id["rules-json"] == '{\n  "rules": []\n}'
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / "dashboard-empty.png"
    screenshot.unlink(missing_ok=True)
    run_chromium(chromium, tmp_path / "profile-shot", url + "#calls", f"--screenshot={screenshot}")
    with Image.open(screenshot) as image:
        assert image.size == (1280, 1000)
        # The calls chart spans the whole window: its lines run along zero across it, nothing recorded.
        failed_line = [
            x
            for x in range(image.width)
            if any(_near(image.getpixel((x, y)), (0x9A, 0x3F, 0x00)) for y in range(200, 420))
        ]
        assert len(failed_line) > 600


def _near(pixel: Any, colour: tuple[int, int, int]) -> bool:
    return all(abs(int(channel) - wanted) <= 40 for channel, wanted in zip(pixel[:3], colour, strict=True))


# --- Safety: who may read it, and what any valid data costs the page --------------------------


def _raw_get(url: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    host, port = url.split("/")[2].rsplit(":", 1)
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        response.read()
        return response.status, {name.lower(): value for name, value in response.getheaders()}
    finally:
        connection.close()


def test_the_server_answers_only_its_own_host_and_token(log_dir: Path, serve: Callable[[Path], str]) -> None:
    url = serve(log_dir)
    port = url.split("/")[2].rsplit(":", 1)[1]
    data_path = "/" + url.split("/", 3)[3] + "data.json"
    for own in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert _raw_get(url, data_path, {"Host": own})[0] == 200
    # A page that rebinds its name to 127.0.0.1 sends that name; another port is another server.
    for foreign in ("attacker.example", f"attacker.example:{port}", f"127.0.0.1:{int(port) + 1}", "127.0.0.1", ""):
        status, _ = _raw_get(url, data_path, {"Host": foreign} if foreign else {})
        assert status == 403, foreign
    # The token is the path: a guessed one, or none, finds nothing.
    for path in ("/data.json", "/", "/x/data.json", data_path.replace("/data.json", "x/data.json")):
        assert _raw_get(url, path, {"Host": f"127.0.0.1:{port}"})[0] == 404, path


def test_the_server_sends_no_cors_headers(log_dir: Path, serve: Callable[[Path], str]) -> None:
    url = serve(log_dir)
    port = url.split("/")[2].rsplit(":", 1)[1]
    data_path = "/" + url.split("/", 3)[3] + "data.json"
    status, headers = _raw_get(url, data_path, {"Host": f"127.0.0.1:{port}", "Origin": "https://attacker.example"})
    assert status == 200
    assert not [name for name in headers if name.startswith("access-control-")]
    request = urllib.request.Request(url + "data.json", method="OPTIONS")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    with refused.value:
        assert refused.value.code == 501
        assert "Access-Control-Allow-Origin" not in refused.value.headers


def test_an_idle_connection_is_closed(log_dir: Path) -> None:
    server = make_server(log_dir, port=0, idle_timeout=0.5)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as idle:
            started = time.monotonic()
            assert idle.recv(1) == b""  # the server hung up on a connection that said nothing
            assert time.monotonic() - started < 5
    finally:
        server.shutdown()
        server.server_close()


def _hostile_outcomes(log_dir: Path, buckets: int) -> None:
    """Valid saved outcomes no page could draw naively: a bucket at 1e20 (where start + 3600 ==
    start) and ``buckets`` hourly buckets, in the totals and in a pattern."""
    hourly = [{"start": 3600.0 * index, "ok": 1} for index in range(buckets)] + [{"start": 1e20, "ok": 1}]
    counts = [{"start": 3600.0 * index, "count": 1} for index in range(buckets)] + [{"start": 1e20, "count": 1}]
    pattern = {
        "tool": "search",
        "param": "limit",
        "error_type": "int_parsing",
        "shape": "string",
        "count": buckets + 1,
        "first_seen": 0,
        "last_seen": 1e20,
        "hourly": counts,
    }
    document = {"tools": [{"tool": "search", "ok": buckets + 1}], "hourly": hourly, "patterns": [pattern]}
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "outcomes.json").write_text(json.dumps(document), "utf-8")


def test_the_data_is_bounded_whatever_valid_file_it_reads(tmp_path: Path) -> None:
    _hostile_outcomes(tmp_path / "logs", 50_000)
    extra = [{"tool": f"t{index}", "ok": index} for index in range(PAGE_ROWS * 3)]
    stats = json.loads((tmp_path / "logs" / "outcomes.json").read_text("utf-8"))
    stats["tools"] += extra
    (tmp_path / "logs" / "outcomes.json").write_text(json.dumps(stats), "utf-8")
    outcomes = dashboard_data(tmp_path / "logs")["outcomes"]
    assert len(outcomes["hourly"]) == PAGE_HOURS
    assert outcomes["hourly"][-1]["start"] == 1e20  # the latest buckets are the ones kept
    assert len(outcomes["patterns"][0]["hourly"]) == PAGE_HOURS
    assert len(outcomes["tools"]) == PAGE_ROWS
    assert outcomes["tools"][0]["tool"] == "search"  # the most called first


def test_the_page_finishes_on_hostile_valid_data_in_chromium(chromium: str, tmp_path: Path) -> None:
    _hostile_outcomes(tmp_path / "logs", 200_000)
    page = tmp_path / "dashboard.html"
    # The embedded page is written unbounded by the renderer's caller on purpose: the page must cope too.
    data = dashboard_data(tmp_path / "logs")
    data["outcomes"] = json.loads((tmp_path / "logs" / "outcomes.json").read_text("utf-8"))
    page.write_text(render_html(data), "utf-8")
    dom = Dom(run_chromium(chromium, tmp_path / "profile", page.as_uri(), "--dump-dom"))
    assert dom.text_by_id["status"].startswith("snapshot of ")
    assert dom.text_by_id["patterns-count"] == "1"
