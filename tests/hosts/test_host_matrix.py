"""The host matrix as the test (issue 33, items 2 and 3): every profiled host by shape by tool by intended value.

The default style (`DEFAULT_STYLE`, the portable shape, `pydantic_lenient.schema.portable`) must be
listed by every host, deliver every intended value except the listed exceptions
(`tests.hosts.matrix.EXCEPTIONS`: values ambiguous by the contract, and server-side decisions still
open), and never do worse than the same tool served plainly, cell by cell. The figures of every
shape are printed (``-s``) for the report and the docs.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pydantic_lenient import input_schema, lenient_tool
from pydantic_lenient.hosts import PROFILES
from pydantic_lenient.schema.catalog import model_from_function
from pydantic_lenient.schema.styles import DEFAULT_STYLE
from tests.hosts.hosts_page import PAGE, page
from tests.hosts.matrix import (
    EXCEPTIONS,
    HEADER,
    SHAPES,
    Cell,
    Tool,
    cases,
    excused,
    figures,
    import_source,
    run,
    schema_of,
    table,
    tools,
    verdict,
)


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Cell], dict[str, Tool]]:
    directory = tmp_path_factory.mktemp("host_matrix")
    cells = run(directory)
    print("\n" + table(cells))
    return cells, {tool.name: tool for tool in tools(directory)}


def test_the_matrix_covers_every_host_shape_and_tool(matrix: tuple[list[Cell], dict[str, Tool]]) -> None:
    cells, by_name = matrix
    assert {cell.host for cell in cells} == set(PROFILES)
    assert {cell.shape for cell in cells} == set(SHAPES)
    assert len(by_name) >= 45
    forms = Counter(cell.form for cell in cells)
    for form in ("native", "digits", '"false"', "JSON text", "null", '"null"', "unset", "out of range"):
        assert forms[form] > 0, form


def test_the_default_configuration_is_the_default_style(matrix: tuple[list[Cell], dict[str, Tool]]) -> None:
    """What the matrix measures as the default is what a tool lists with no style given."""
    _, by_name = matrix
    for tool in by_name.values():
        assert input_schema(tool.lenient) == schema_of(tool, DEFAULT_STYLE), tool.name


@pytest.mark.parametrize("shape", [DEFAULT_STYLE, "hand-written"])
def test_every_host_lists_every_tool_in_the_default_style(
    matrix: tuple[list[Cell], dict[str, Tool]], shape: str
) -> None:
    """The default style, and hand-written lenient types under pydantic's own generator (issue 33:
    the types themselves write the portable shape)."""
    cells, _ = matrix
    unlisted = sorted(
        {(cell.host, cell.tool, cell.detail) for cell in cells if cell.shape == shape and cell.verdict == "unlisted"}
    )
    assert not unlisted


def test_the_default_style_delivers_every_intended_value_but_the_listed_exceptions(
    matrix: tuple[list[Cell], dict[str, Tool]],
) -> None:
    cells, by_name = matrix
    portable = [cell for cell in cells if cell.shape == DEFAULT_STYLE]
    unexcused = [cell for cell in portable if cell.verdict != "right" and excused(cell, by_name[cell.tool]) is None]
    assert not unexcused, unexcused[:10]
    # Every exception is still needed: when the server closes a gap, its line goes.
    used = {excused(cell, by_name[cell.tool]) for cell in portable if cell.verdict != "right"}
    assert used == {exception.reason for exception in EXCEPTIONS}


@pytest.mark.parametrize("shape", [DEFAULT_STYLE, "hand-written"])
def test_no_host_does_worse_with_the_default_style_than_with_a_plain_server(
    matrix: tuple[list[Cell], dict[str, Tool]], shape: str
) -> None:
    """Cell by cell, for the default style and for hand-written lenient types served with no adapter."""
    cells, _ = matrix
    verdicts = {(cell.host, cell.shape, cell.tool, cell.form): cell for cell in cells}
    worse = [
        (cell, verdicts[(cell.host, shape, cell.tool, cell.form)])
        for cell in cells
        if cell.shape == "plain" and cell.verdict == "right"
        and verdicts[(cell.host, shape, cell.tool, cell.form)].verdict != "right"
    ]  # fmt: skip
    assert not worse, worse[:10]
    counts = figures(cells)
    for host in PROFILES:
        plain, lenient = counts[(host, "plain")], counts[(host, shape)]
        assert lenient["right"] >= plain["right"], host
        assert lenient["wrong"] <= plain["wrong"], host


def test_the_former_default_does_worse_than_no_library_on_cursor_and_gemini_hosts(
    matrix: tuple[list[Cell], dict[str, Tool]],
) -> None:
    """Issue 33's finding, measured: ``type-array``, the default before it, breaks Cursor and every
    Gemini-backed host; it stays for users who pin it."""
    cells, _ = matrix
    counts = figures(cells)
    for host in ("cursor", "gemini-cli", "copilot-cli+gemini", "vscode+gemini"):
        assert counts[(host, "type-array")]["right"] < counts[(host, "plain")]["right"], host
    for host in ("gemini-cli", "copilot-cli+gemini", "vscode+gemini"):
        assert counts[(host, "type-array")]["listed"] < counts[(host, "plain")]["listed"], host


def test_vs_code_turns_null_into_another_value_for_a_plain_server_but_not_in_the_default_style(
    matrix: tuple[list[Cell], dict[str, Tool]],
) -> None:
    cells, _ = matrix
    wrong = {
        (cell.shape, cell.tool)
        for cell in cells
        if cell.host == "vscode" and cell.form == "null" and cell.verdict == "wrong"
    }
    assert ("plain", "shape.Optional[int]") in wrong  # null arrives as 0 (Ajv coerceTypes in anyOf)
    assert not {tool for shape, tool in wrong if shape == DEFAULT_STYLE}


def test_the_profiles_cite_their_sources() -> None:
    for host in PROFILES.values():
        assert host.sources, host.name
        module = __import__(type(host).__module__, fromlist=["__doc__"])
        assert "Sources:" in (module.__doc__ or ""), host.name


def test_the_hosts_page_is_what_the_matrix_measures(matrix: tuple[list[Cell], dict[str, Tool]]) -> None:
    """docs/hosts.md is generated from this run: a change to a profile, a shape or the table of tools
    shows on the page, or this fails."""
    cells, _ = matrix
    expected = page(cells)
    assert PAGE.read_text(encoding="utf-8") == expected, (
        "docs/hosts.md is stale: run `python -m tests.hosts.hosts_page` from the repository root and commit it"
    )
    assert table(cells) in expected
    for host in PROFILES.values():
        assert f"`{host.name}`: {host.title}" in expected
        for source in host.sources:
            assert source in expected, (host.name, source)


def test_keeping_the_model_class_by_default_would_refuse_a_model_sent_as_text(
    matrix: tuple[list[Cell], dict[str, Tool]], tmp_path: Path
) -> None:
    """Why a bare `lenient_tool` gives a sole model parameter its JSON-text form, although pydantic-ai
    then nests it (docs/frameworks.md, "A model that stands for all the arguments"): with
    ``keep_model_class=True`` the parameter is a bare ``$ref``, and the hosts that pass the model's
    text through refuse it, Claude Code even when the model wrote the object (it forwards a value
    behind a ``$ref`` as text). No host does worse than plain either way, and no other cell changes."""
    cells, by_name = matrix
    point = by_name["shape.Point"]
    module = import_source(tmp_path, f"{HEADER}\n\ndef book(value: Point) -> str:\n    return 'done'\n")
    kept = point._replace(lenient=model_from_function(lenient_tool(module.book, keep_model_class=True)))
    schema = schema_of(kept, DEFAULT_STYLE)
    assert schema["properties"]["value"] == {"$ref": "#/$defs/Point"}
    verdicts = {(cell.host, cell.shape, cell.form): cell.verdict for cell in cells if cell.tool == point.name}
    changed = set()
    for host in PROFILES.values():
        for case in cases(kept):
            result, _ = verdict(host, kept, DEFAULT_STYLE, schema, case)
            assert result == "right" or verdicts[(host.name, "plain", case.form)] != "right", (host.name, case.form)
            if result != verdicts[(host.name, DEFAULT_STYLE, case.form)]:
                assert (verdicts[(host.name, DEFAULT_STYLE, case.form)], result) == ("right", "refused")
                changed.add((host.name, case.form))
    assert ("claude-code", "native") in changed
    assert {form for _, form in changed} == {"native", "JSON text"}
    assert len(changed) == 10, sorted(changed)  # JSON text on 9 of the 13 profiles, and Claude Code's native
    assert len({host for host, form in changed if form == "JSON text"}) == 9
