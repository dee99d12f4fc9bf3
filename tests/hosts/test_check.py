"""`pydantic_lenient.hosts.check` and `hosts.tools`: whether a tool works on a host, the verdicts
behind ``catalog --check --host`` and `pydantic_lenient.testing.assert_works_on_host`."""

from __future__ import annotations

import itertools
import os
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel, Field

from pydantic_lenient import LenientInt, input_schema, lenient_tool
from pydantic_lenient.hosts import PROFILES, profile
from pydantic_lenient.hosts.check import Verdict, problems, shape_at, trials, verdicts
from pydantic_lenient.hosts.tools import check_on_hosts
from pydantic_lenient.schema.catalog import model_from_function
from tests.annotation_strategies import Parameter, module_source, parameters
from tests.hosts.matrix import import_source


class Search(BaseModel):
    query: str
    limit: Optional[LenientInt] = None
    size: Annotated[LenientInt, Field(ge=1, le=50)] = 10
    note: Optional[str] = None


def _server(model: type[BaseModel]) -> Any:
    return lambda arguments: model.model_validate(arguments).model_dump(mode="json", by_alias=True)


def _verdicts(host: str, style: str, model: type[BaseModel] = Search) -> list[Verdict]:
    server = _server(model)
    tool_trials = trials(input_schema(model, style="strict"), server)
    return verdicts(profile(host), input_schema(model, style=style), tool_trials, server)  # type: ignore[arg-type]


def _outcome(found: list[Verdict], parameter: str, form: str) -> str:
    (verdict,) = [v for v in found if v.parameter == parameter and v.form == form]
    return verdict.outcome


def test_the_trials_cover_the_forms_models_emit() -> None:
    found = {(trial.parameter, trial.form) for trial in trials(input_schema(Search, style="strict"), _server(Search))}
    assert {("limit", form) for form in ("native", "digits", "null", '"null"', "unset")} <= found
    assert {("size", "out of range"), ("size", "out of range, digits")} <= found
    assert ("note", '"null"') not in found  # "null" for a text parameter is that text
    assert ("query", "unset") not in found  # required


def test_a_type_array_is_refused_by_cursor_and_the_portable_style_is_not() -> None:
    type_array = _verdicts("cursor", "type-array")
    assert _outcome(type_array, "limit", "native") == "refused"
    assert shape_at(input_schema(Search, style="type-array"), "limit") == "a type array"
    portable = _verdicts("cursor", "portable")
    assert _outcome(portable, "limit", "native") == "right"
    assert _outcome(portable, "size", "out of range") == "right"  # refused clearly, as it must be
    # Cursor's "" for a left-out Optional[str] is text the parameter takes as itself: ambiguous, not wrong.
    assert _outcome(portable, "note", "unset") == "ambiguous"
    # Its "" for a left-out Optional[int] is refused by the server: no listing can change that.
    assert [(v.parameter, v.form) for v in problems(portable)] == [("limit", "unset")]


def test_vs_code_turns_null_into_0_in_the_any_of_style_and_not_in_the_portable_one() -> None:
    any_of = _verdicts("vscode", "any-of")
    assert _outcome(any_of, "limit", "null") == "wrong"
    assert "the host sent 0, the tool got 0" in next(v.detail for v in any_of if v.outcome == "wrong")
    assert not problems(_verdicts("vscode", "portable"))


def test_text_a_host_makes_whatever_the_listing_is_ambiguous_and_other_text_is_wrong() -> None:
    # VS Code's Ajv coerces null to "" through the string branch: the listing causes it, so it is wrong.
    assert _outcome(_verdicts("vscode", "any-of"), "note", "null") == "wrong"
    assert _outcome(_verdicts("vscode", "portable"), "note", "null") == "right"
    # Claude Code forwards null behind anyOf as its JSON text "null", whatever the listing.
    assert _outcome(_verdicts("claude-code", "portable"), "note", "null") == "ambiguous"


def test_a_listing_the_host_refuses_is_one_verdict_for_the_tool() -> None:
    (verdict,) = _verdicts("gemini-cli", "type-array")
    assert (verdict.parameter, verdict.outcome) == (None, "unlisted")
    assert "a type array other than [T, null]" in verdict.detail


def test_a_plain_server_gets_wrong_values_and_the_findings_say_so() -> None:
    class Plain(BaseModel):
        mode: Optional[Literal[1, 2]] = None
        count: Optional[int] = None

    (check,) = check_on_hosts([("plain", Plain)], [profile("vscode")], style="strict")
    assert not check.works
    assert any(line.startswith("error: plain: vscode corrupts") for line in check.findings)
    assert any(v.outcome == "wrong" for v in check.verdicts)


_CI = os.environ.get("HYPOTHESIS_PROFILE") == "ci"
_DIRECTORY = itertools.count()
# Claude Code turns values behind anyOf into text (claude-code#18260): the matrix lists what that leaves.
_HOSTS = [host for name, host in PROFILES.items() if not name.startswith("claude-code")]


@settings(
    max_examples=300 if _CI else 30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(parameter=parameters())
def test_in_the_portable_style_no_host_delivers_a_value_wrong_or_refuses_a_tool_a_plain_server_lists(
    tmp_path: Path, parameter: Parameter
) -> None:
    directory = tmp_path / str(next(_DIRECTORY))
    directory.mkdir()
    function = import_source(directory, module_source(parameter)).tool
    plain = model_from_function(function).model_json_schema()  # no library: pydantic's own schema
    for check in check_on_hosts([lenient_tool(function)], _HOSTS, style="portable"):
        assert not [v for v in check.verdicts if v.outcome == "wrong"], parameter.written
        # Listed wherever the plain tool is. (Not yet everywhere: the strict rewrite the portable
        # style uses for items keeps an integer Literal's digit-text branch, a union items the
        # Gemini API refuses, as it refuses the plain tool's integer enum.)
        if PROFILES[check.host].listing(plain).accepted:
            assert not [v for v in check.verdicts if v.outcome == "unlisted"], parameter.written


def _either_number(value: Union[int, Decimal]) -> None:
    """A tool."""


def test_a_decimal_is_compared_by_the_number_it_holds() -> None:
    """`Union[int, Decimal]` given "7" gets Decimal("7"), the same number as the 7 its native form
    gives the int: right, not wrong (the nox sessions' random examples found it as "wrong")."""
    (check,) = check_on_hosts([lenient_tool(_either_number)], [profile("claude-desktop")])
    assert {(verdict.form, verdict.outcome) for verdict in check.verdicts} == {("native", "right"), ("digits", "right")}
