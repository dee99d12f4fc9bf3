"""pytest plugin (registered by entry point): the ``lenient`` fixture and the ``lenient_style`` ini option.

def test_search_takes_digit_strings(lenient):
    lenient.accepts(SearchInput, {"folder": "Dev", "limit": "100"})
    lenient.field_schema(SearchInput, "limit", types={"integer", "string", "null"})

def test_search_works_on_cursor(lenient):
    lenient.works_on_host([search], "cursor")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from .schema.styles import DEFAULT_STYLE, STYLES, Style

__all__ = ("LenientChecks", "lenient", "pytest_addoption")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "lenient_style", help=f"schema style the lenient fixture checks: {', '.join(STYLES)}", default=DEFAULT_STYLE
    )


@dataclass(frozen=True)
class LenientChecks:
    """`pydantic_lenient.testing`'s helpers with the project's default style filled in."""

    style: Style

    def field_schema(self, model: Any, field: str, **expected: Any) -> dict[str, Any]:
        from .testing import assert_field_schema

        return assert_field_schema(model, field, **{"style": self.style, **expected})

    def accepts(self, model: Any, arguments: Any, **options: Any) -> Any:
        from .testing import assert_accepts

        return assert_accepts(model, arguments, **{"style": self.style, **options})

    def rejects(self, model: Any, arguments: Any, **options: Any) -> str:
        from .testing import assert_rejects

        return assert_rejects(model, arguments, **{"style": self.style, **options})

    def passes_audit(self, tools: Any, **options: Any) -> None:
        from .testing import assert_passes_audit

        assert_passes_audit(tools, **options)

    def works_on_host(self, tools: Any, host: Any = "all", **options: Any) -> Any:
        from .testing import assert_works_on_host

        return assert_works_on_host(tools, host, **{"style": self.style, **options})


@pytest.fixture
def lenient(request: pytest.FixtureRequest) -> LenientChecks:
    """Assert schema shape, host/model agreement and the strictness audit (see `pydantic_lenient.testing`)."""
    style = request.config.getini("lenient_style")
    if style not in STYLES:
        raise pytest.UsageError(f"lenient_style must be one of {', '.join(STYLES)}, not {style!r}")
    return LenientChecks(style)
