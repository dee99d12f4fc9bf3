"""The package's shape, checked in CI: no module in ``src/`` over `MAX_LINES` lines.

Import cycles, between the packages and between the modules inside one, are import-linter's
``acyclic_siblings`` contract in ``pyproject.toml`` (CI runs ``lint-imports``).
"""

from __future__ import annotations

from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src"
MAX_LINES = 500


def _line_counts() -> dict[str, int]:
    return {
        path.relative_to(SOURCE).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(SOURCE.rglob("*.py"))
    }


def test_the_source_is_found() -> None:
    assert "pydantic_lenient/__init__.py" in _line_counts()


def test_no_module_is_over_the_limit() -> None:
    over = {name: count for name, count in _line_counts().items() if count > MAX_LINES}
    assert not over, f"split these modules (at most {MAX_LINES} lines each): {over}"
