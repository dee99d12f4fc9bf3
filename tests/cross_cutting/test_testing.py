"""Every helper in pydantic_lenient.testing, shown passing and shown failing."""

from __future__ import annotations

from typing import Optional

import pytest
from pydantic import BaseModel, Field

from pydantic_lenient import LenientJson, LenientU32, LenientU64, LenientUInt
from pydantic_lenient.pytest_plugin import LenientChecks
from pydantic_lenient.testing import (
    advertised_types,
    assert_accepts,
    assert_field_schema,
    assert_passes_audit,
    assert_rejects,
)


class Search(BaseModel):
    folder: str
    limit: Optional[LenientUInt] = None
    uid: LenientU32 = 0
    big: LenientU64 = 0  # its exact range pattern would pass 200 characters: the plain one is advertised
    urls: Optional[LenientJson[list[str]]] = None
    renamed: int = Field(default=0, alias="renamedField")


# The digit strings from 0 to 2**32 - 1, leading zeros allowed as LenientU32 reads them.
U32_DIGITS = (
    "^0*(?:0|[1-9][0-9]{0,8}|[1-3][0-9]{9}|4(?:[0-1][0-9]{8}|2(?:[0-8][0-9]{7}|9(?:[0-3][0-9]{6}|4(?:[0-8][0-9]{5}"
    "|9(?:[0-5][0-9]{4}|6(?:[0-6][0-9]{3}|7(?:[0-1][0-9]{2}|2(?:[0-8][0-9]|9[0-5])))))))))$"
)


def test_field_schema_passes_and_fails() -> None:
    assert_field_schema(Search, "limit", types={"number", "string", "null"}, pattern="^[0-9]+$", minimum=0)
    assert_field_schema(Search, "uid", style="any-of", maximum=2**32 - 1, pattern=U32_DIGITS)
    assert_field_schema(Search, "big", style="any-of", maximum=2**64 - 1, pattern="^[0-9]+$")
    assert_field_schema(Search, "uid", style="strict", types={"integer"}, pattern=None)
    with pytest.raises(
        AssertionError, match=r"types are \['integer', 'null', 'string'\], expected \['integer', 'null'\]"
    ):
        assert_field_schema(Search, "limit", types={"integer", "null"}, style="type-array")
    with pytest.raises(AssertionError, match="maximum is 4294967295, expected 255"):
        assert_field_schema(Search, "uid", maximum=255)
    with pytest.raises(AssertionError, match="advertises no field 'nope'"):
        assert_field_schema(Search, "nope")


def test_field_schema_uses_the_alias() -> None:
    assert_field_schema(Search, "renamed", types={"integer"})


def test_accepts_passes_and_names_the_side_that_refused() -> None:
    assert assert_accepts(Search, {"folder": "x", "limit": "100"}).limit == 100  # type: ignore[attr-defined]
    with pytest.raises(AssertionError, match=r"the host refuses: limit: .*the model refuses: limit: Input should be"):
        assert_accepts(Search, {"folder": "x", "limit": "abc"})
    with pytest.raises(AssertionError, match=r"the host accepts .* and the model refuses: big: Input should be less"):
        assert_accepts(Search, {"folder": "x", "big": str(2**64)})
    with pytest.raises(
        AssertionError, match=r"the host refuses: uid: .* and the model refuses: uid: Input should be less"
    ):
        assert_accepts(Search, {"folder": "x", "uid": "4294967296"})


def test_rejects_passes_and_names_the_side_that_accepted() -> None:
    assert "lenient_int" in assert_rejects(Search, {"folder": "x", "limit": " 1"})
    assert "less_than_equal" in assert_rejects(Search, {"folder": "x", "uid": "4294967296"})
    assert "less_than_equal" in assert_rejects(Search, {"folder": "x", "big": str(2**64)}, host_may_accept=True)
    with pytest.raises(AssertionError, match=r"the host accepts .* and the model refuses"):
        assert_rejects(Search, {"folder": "x", "big": str(2**64)})
    with pytest.raises(AssertionError, match=r"the host accepts .* and the model accepts"):
        assert_rejects(Search, {"folder": "x", "limit": "1"})


def test_passes_audit_passes_and_lists_findings() -> None:
    class Lenient(BaseModel):
        limit: LenientUInt = 0

    assert_passes_audit([("lenient", Lenient)])
    with pytest.raises(AssertionError, match=r"search.renamedField: int is not lenient; use LenientInt"):
        assert_passes_audit([("search", Search)])
    with pytest.raises(AssertionError, match="does not accept JSON text"):
        assert_passes_audit([("lists", _with_list())], notes=True)
    assert_passes_audit([("lists", _with_list())])


def _with_list() -> type[BaseModel]:
    class Lists(BaseModel):
        names: list[str]

    return Lists


def test_advertised_types_reads_arrays_branches_and_refs() -> None:
    assert advertised_types({"type": ["integer", "null"]}) == {"integer", "null"}
    assert advertised_types({"anyOf": [{"$ref": "#/$defs/X"}, {"type": "string"}]}) == {"object", "string"}


def test_the_pytest_fixture_uses_the_configured_style(lenient: LenientChecks) -> None:
    assert lenient.style == "portable"
    lenient.field_schema(Search, "limit", types={"number", "string", "null"})
    lenient.accepts(Search, {"folder": "x", "urls": '["a"]'})
    lenient.rejects(Search, {"folder": "x", "urls": "nope"}, host_may_accept=True)
    with pytest.raises(AssertionError):
        lenient.passes_audit([("search", Search)])


def test_the_plugin_reads_lenient_style_from_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlenient_style = any-of\n")
    pytester.makepyfile(
        """
        def test_style(lenient):
            assert lenient.style == "any-of"
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_the_plugin_refuses_an_unknown_style(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlenient_style = loose\n")
    pytester.makepyfile("def test_style(lenient):\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*lenient_style must be one of*"])


def test_the_fixture_checks_a_tool_on_hosts_in_the_configured_style(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlenient_style = portable\n")
    pytester.makepyfile(
        """
        from typing import Optional

        import pytest

        from pydantic_lenient import LenientInt


        def search(query: str, limit: Optional[LenientInt] = None) -> None: ...


        def test_portable_works_on_gemini_and_vscode(lenient):
            checks = lenient.works_on_host([search], ["gemini-cli", "vscode"])
            assert [check.host for check in checks] == ["gemini-cli", "vscode"]


        def test_type_array_does_not_work_on_gemini(lenient):
            with pytest.raises(AssertionError, match="gemini-cli refuses the tool"):
                lenient.works_on_host([search], "gemini-cli", style="type-array")


        def test_cursor_sends_an_empty_string_for_the_unset_integer(lenient):
            with pytest.raises(AssertionError, match="the portable shape does not fix it"):
                lenient.works_on_host([search], "all")
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=3)
