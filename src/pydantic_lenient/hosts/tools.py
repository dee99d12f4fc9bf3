"""Any collection of tools (what `pydantic_lenient.tool_specs` takes: functions, models, servers)
checked on host profiles: what the ``catalog --check --host`` command and
`pydantic_lenient.testing.assert_works_on_host` report. Each tool's input model stands for the
server, and its catalog entry (`pydantic_lenient.tool_catalog`) is what the host lists.

Unlike the rest of `pydantic_lenient.hosts`, this module loads pydantic (through the catalog).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from pydantic_lenient.schema.catalog import tool_catalog, tool_specs
from pydantic_lenient.schema.targets import input_schema

from .check import Server, Verdict, host_findings, trials, verdicts
from .profile import HostProfile

if TYPE_CHECKING:
    from pydantic import BaseModel

    from pydantic_lenient.schema.styles import Style

__all__ = ("HostCheck", "check_on_hosts")


@dataclass(frozen=True)
class HostCheck:
    """One tool on one host: every verdict, and the findings (empty when the tool works there)."""

    tool: str
    host: str
    verdicts: tuple[Verdict, ...]
    findings: tuple[str, ...]

    @property
    def works(self) -> bool:
        return not self.findings


def _server(model: type[BaseModel]) -> Server:
    """What the tool gets, as JSON, with each Decimal as the number it holds (`_as_number`)."""

    def received(arguments: Any) -> Any:
        taken = model.model_validate(arguments)
        return to_jsonable_python(_decimals_as_numbers(taken.model_dump(by_alias=True)))

    return received


def _decimals_as_numbers(value: Any) -> Any:
    if isinstance(value, Decimal):
        return _as_number(value)
    if isinstance(value, dict):
        return {key: _decimals_as_numbers(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_decimals_as_numbers(item) for item in value]
    return value


def _as_number(value: Decimal) -> Any:
    """A Decimal as the JSON number it holds where one holds it exactly (an integral one as an int,
    else a double whose shortest text is the Decimal's), else its text: `Union[int, Decimal]` given
    ``"7"`` gets ``Decimal("7")``, the same number as the ``7`` its native form gives the int, while
    ``"0.1000000000000000000001"`` that a host turned into the double ``0.1`` stays another value."""
    if value.is_finite() and value == value.to_integral_value() and value.adjusted() < 64:
        return int(value)
    as_float = float(value)
    return as_float if value.is_finite() and Decimal(repr(as_float)) == value else str(value)


def check_on_hosts(tools: Any, hosts: Iterable[HostProfile], *, style: Style | None = None) -> list[HostCheck]:
    """Each tool of ``tools`` as its catalog lists it in ``style`` (a server's as it lists them), on
    each of ``hosts``: the host's verdict on every intended value (`pydantic_lenient.hosts.check`).

    >>> from pydantic_lenient import LenientInt
    >>> from pydantic_lenient.hosts import profile
    >>> from pydantic_lenient.hosts.tools import check_on_hosts
    >>> def page(size: LenientInt) -> None: ...
    >>> [check.works for check in check_on_hosts([page], [profile("cursor")])]
    [True]
    >>> print(check_on_hosts([page], [profile("cursor")], style="type-array")[0].findings[0])
    ... # doctest: +NORMALIZE_WHITESPACE
    error: page: cursor refuses a type array at properties.size (the native value: the host: Parameter 'size'
    must be of type integer,string, got number); use the portable shape (style="portable")
    """
    hosts = list(hosts)
    listed = {tool["name"]: tool["inputSchema"] for tool in tool_catalog(tools, style=style)["tools"]}
    checks = []
    for spec in tool_specs(tools):
        canonical = input_schema(spec.input_model, style="strict")
        server = _server(spec.input_model)
        tool_trials = trials(canonical, server)
        advertised = listed[spec.name]
        for host in hosts:
            found = tuple(verdicts(host, advertised, tool_trials, server))
            findings = tuple(host_findings(spec.name, host, advertised, canonical, server))
            checks.append(HostCheck(spec.name, host.name, found, findings))
    return checks
