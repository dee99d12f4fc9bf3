"""The portable shape over generated annotations (tests/annotation_strategies.py), on every host profile.

For every annotation: every host that lists the tool served plainly lists it in the portable shape,
and no host delivers a value whose meaning differs from what the server reads from the value itself
(a host may refuse a call, or convert a form to the same meaning, never to another). Claude Code
is left out of the second rule, in both variants: its model writes every value as text, and text
such as ``"null"`` or ``"5"`` for a text parameter is ambiguous by the contract (tests/hosts/matrix.py
lists those cases).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from pydantic_lenient import input_schema, lenient_tool
from pydantic_lenient.hosts import PROFILES
from pydantic_lenient.schema.catalog import model_from_function
from tests.annotation_strategies import Parameter, module_source, parameters
from tests.hosts.matrix import import_source

_CI = os.environ.get("HYPOTHESIS_PROFILE") == "ci"
_EXAMPLES = settings(
    max_examples=120 if _CI else 20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
_DIRECTORY = itertools.count()
_MEANING_HOSTS = [host for name, host in PROFILES.items() if not name.startswith("claude-code")]


def _models(directory: Path, parameter: Parameter) -> tuple[type[BaseModel], type[BaseModel]]:
    module = import_source(directory, module_source(parameter))
    return model_from_function(module.tool), model_from_function(lenient_tool(module.tool))


_REFUSED = object()


def _read(model: type[BaseModel], arguments: dict[str, Any]) -> Any:
    """What the server reads from the arguments (JSON form), or `_REFUSED`."""
    try:
        return to_jsonable_python(model.model_validate(arguments).value)  # type: ignore[attr-defined]
    except ValidationError:
        return _REFUSED


@_EXAMPLES
@given(parameter=parameters(), data=st.data())
def test_the_portable_shape_is_listed_wherever_the_plain_server_is_and_keeps_every_meaning(
    tmp_path: Path, parameter: Parameter, data: st.DataObject
) -> None:
    directory = tmp_path / str(next(_DIRECTORY))
    directory.mkdir()
    plain, lenient = _models(directory, parameter)
    portable = input_schema(lenient, style="portable")
    for host in PROFILES.values():
        if host.listing(plain.model_json_schema()).accepted:
            assert host.listing(portable).accepted, (host.name, parameter.written, host.listing(portable).reasons)
    values = data.draw(st.lists(parameter.annotation.values, min_size=1, max_size=6))
    for value in values:
        meaning = _read(lenient, {"value": value})
        if meaning is _REFUSED:
            continue  # the server refuses it anyway: nothing a host does can make it wrong
        for host in _MEANING_HOSTS:
            listing = host.listing(portable)
            if not listing.accepted:
                continue
            call = host.call(listing, {"value": value})
            if call.arguments is None:
                continue
            received = _read(lenient, call.arguments)
            assert received is _REFUSED or received == meaning, (host.name, parameter.written, value, call.arguments)
