"""Test helpers: assert what a tool advertises, and that host and server agree on a value.

* `assert_field_schema`: a field's advertised types, pattern and bounds, per style.
* `assert_accepts` / `assert_rejects`: a call checked against the advertised schema with a real
  validator (as a host would) **and** against the model; a failure says which side disagreed.
* `assert_passes_audit`: no field that a wrong-typed argument would break.
* `assert_works_on_host`: the tool works on a host, as its profile (`pydantic_lenient.hosts`) says:
  listed, and each intended value delivered right or refused clearly, never delivered wrong.

Also available as the ``lenient`` pytest fixture (this package registers a pytest plugin).
Needs the ``testing`` extra (``pip install 'pydantic-lenient[testing]'``; in a clone,
``pip install -e '.[testing]'``): ``jsonschema`` and ``regress``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from .hosts import PROFILES, profile
from .hosts.tools import HostCheck, check_on_hosts
from .schema.audit import audit, format_findings
from .schema.hosts import Draft, host_validator
from .schema.styles import DEFAULT_STYLE, Style
from .schema.targets import input_schema

__all__ = (
    "Draft",
    "advertised_types",
    "assert_accepts",
    "assert_field_schema",
    "assert_passes_audit",
    "assert_rejects",
    "assert_works_on_host",
    "host_validator",
)

_UNSET: Any = object()


def advertised_types(schema: Mapping[str, Any]) -> set[str]:
    """The JSON types a (field) schema names, through type arrays and ``anyOf``/``oneOf`` branches.
    A ``$ref`` counts as ``"object"``, as pydantic only refers to models.

    >>> from pydantic_lenient.testing import advertised_types
    >>> sorted(advertised_types({"anyOf": [{"type": ["integer", "string"]}, {"$ref": "#/$defs/Page"}]}))
    ['integer', 'object', 'string']
    """
    types: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        types.add(declared)
    elif isinstance(declared, list):
        types.update(declared)
    if "$ref" in schema:
        types.add("object")
    for keyword in ("anyOf", "oneOf"):
        for branch in schema.get(keyword, []):
            types |= advertised_types(branch)
    return types


def _field_schema(model: type[BaseModel], field: str, style: Style) -> dict[str, Any]:
    properties: dict[str, Any] = input_schema(model, style=style).get("properties", {})
    info = model.model_fields.get(field)
    key = (info.alias or field) if info is not None else field
    if key not in properties:
        raise AssertionError(f"{model.__name__} advertises no field {key!r}; it has {sorted(properties)}")
    schema: dict[str, Any] = properties[key]
    return schema


def _keyword(schema: Mapping[str, Any], keyword: str) -> Any:
    """A keyword from the field schema itself or from the first branch that has it."""
    if keyword in schema:
        return schema[keyword]
    for branch_keyword in ("anyOf", "oneOf"):
        for branch in schema.get(branch_keyword, []):
            found = _keyword(branch, keyword)
            if found is not None:
                return found
    return None


def assert_field_schema(
    model: type[BaseModel],
    field: str,
    *,
    types: set[str] | None = None,
    pattern: str | None = _UNSET,
    minimum: float | None = _UNSET,
    maximum: float | None = _UNSET,
    style: Style = DEFAULT_STYLE,
) -> dict[str, Any]:
    """Assert what ``model`` advertises for ``field`` under ``style``; return the field's schema.

    ``types`` is the set of JSON types (``{"integer", "string", "null"}``); ``pattern``, ``minimum``
    and ``maximum`` are compared when given (``None`` asserts there is none).

    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientUInt
    >>> from pydantic_lenient.testing import assert_field_schema
    >>> class Page(BaseModel):
    ...     size: LenientUInt
    >>> assert_field_schema(Page, "size", types={"number", "string"}, pattern="^[0-9]+$", minimum=0)
    {'anyOf': [{'minimum': 0, 'type': 'number'}, {'pattern': '^[0-9]+$', 'type': 'string'}], 'title': 'Size'}
    >>> assert_field_schema(Page, "size", maximum=100)
    Traceback (most recent call last):
      ...
    AssertionError: ...
    """
    schema = _field_schema(model, field, style)
    problems = []
    if types is not None and advertised_types(schema) != set(types):
        problems.append(f"types are {sorted(advertised_types(schema))}, expected {sorted(types)}")
    for keyword, expected in (("pattern", pattern), ("minimum", minimum), ("maximum", maximum)):
        if expected is not _UNSET and _keyword(schema, keyword) != expected:
            problems.append(f"{keyword} is {_keyword(schema, keyword)!r}, expected {expected!r}")
    if problems:
        raise AssertionError(f"{model.__name__}.{field} ({style}): " + "; ".join(problems) + f"\nschema: {schema}")
    return schema


def _both_sides(model: type[BaseModel], arguments: Mapping[str, Any], style: Style) -> tuple[str | None, str | None]:
    """(why the host refuses, why the model refuses), each None when that side accepts."""
    validator = host_validator(input_schema(model, style=style))
    host_error = next(iter(validator.iter_errors(dict(arguments))), None)
    host = None if host_error is None else f"{'/'.join(map(str, host_error.absolute_path))}: {host_error.message}"
    try:
        model.model_validate(dict(arguments))
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        return host, f"{'.'.join(map(str, first['loc']))}: {first['msg']} [{first['type']}]"
    return host, None


def assert_accepts(model: type[BaseModel], arguments: Mapping[str, Any], *, style: Style = DEFAULT_STYLE) -> BaseModel:
    """Assert that a host checking the advertised schema lets ``arguments`` through **and** that the
    model accepts them. Returns the validated model.

    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientUInt
    >>> from pydantic_lenient.testing import assert_accepts
    >>> class Page(BaseModel):
    ...     size: LenientUInt
    ...     cursor: int = 0
    >>> assert_accepts(Page, {"size": "20"})
    Page(size=20, cursor=0)
    >>> assert_accepts(Page, {"size": 20, "cursor": "5"})  # pydantic's lax int takes "5"; the schema does not
    Traceback (most recent call last):
      ...
    AssertionError: ...
    """
    host, server = _both_sides(model, arguments, style)
    if host is not None or server is not None:
        raise AssertionError(
            f"{model.__name__}({dict(arguments)!r}) should be accepted by both sides, but "
            f"the host {'refuses: ' + host if host else 'accepts'} ({style} schema), and "
            f"the model {'refuses: ' + server if server else 'accepts'}"
        )
    return model.model_validate(dict(arguments))


def assert_rejects(
    model: type[BaseModel],
    arguments: Mapping[str, Any],
    *,
    style: Style = DEFAULT_STYLE,
    host_may_accept: bool = False,
) -> str:
    """Assert that the model refuses ``arguments`` and that a host checking the advertised schema
    refuses them too. ``host_may_accept`` allows a listed exception (an out-of-range digit string,
    text that is not JSON of T), where only the model can tell. Returns the model's error.

    >>> from pydantic import BaseModel
    >>> from pydantic_lenient import LenientU8
    >>> from pydantic_lenient.testing import assert_rejects
    >>> class Pixel(BaseModel):
    ...     red: LenientU8
    >>> assert_rejects(Pixel, {"red": "0x1f"})
    'red: Input should be an integer or a string of ASCII digits [lenient_int]'
    >>> assert_rejects(Pixel, {"red": "256"}, host_may_accept=True)  # the pattern cannot say "at most 255"
    'red: Input should be less than or equal to 255 [less_than_equal]'
    """
    host, server = _both_sides(model, arguments, style)
    if server is None or (host is None and not host_may_accept):
        raise AssertionError(
            f"{model.__name__}({dict(arguments)!r}) should be refused by both sides, but "
            f"the host {'refuses: ' + host if host else 'accepts'} ({style} schema), and "
            f"the model {'refuses: ' + server if server else 'accepts'}"
        )
    return server


def assert_passes_audit(tools: Any, *, notes: bool = False) -> None:
    """Assert that no tool in ``tools`` has a field that is not lenient (and, with ``notes``, no
    array or object field that refuses its JSON text).

    >>> from pydantic_lenient import LenientUInt
    >>> from pydantic_lenient.testing import assert_passes_audit
    >>> def page(size: LenientUInt, cursor: int = 0) -> None: ...
    >>> assert_passes_audit([page])
    Traceback (most recent call last):
      ...
    AssertionError: ...
    error: page.cursor: int is not lenient; use LenientInt
    1 error(s), 0 note(s)
    """
    findings = [finding for finding in audit(tools) if notes or finding.level == "error"]
    if findings:
        raise AssertionError("the strictness audit found:\n" + format_findings(findings))


def assert_works_on_host(
    tools: Any, host: str | Iterable[str] = "all", *, style: Style | None = None
) -> list[HostCheck]:
    """Assert that every tool in ``tools`` works on ``host`` (a profile's name, several, or
    ``"all"``) when listed in ``style`` (``portable`` when not given, as `tool_catalog` writes
    functions and models; a server's tools as the server lists them): the host lists it, each
    parameter's native value and its absence arrive as meant, and no intended value (digit
    strings, ``"false"``, JSON text, ``null``, ``"null"``, out of range) arrives as another value.
    Returns every check (`pydantic_lenient.hosts.tools.HostCheck`).

    >>> from typing import Optional
    >>> from pydantic_lenient import LenientInt
    >>> from pydantic_lenient.testing import assert_works_on_host
    >>> def search(query: str, limit: Optional[LenientInt] = None) -> None: ...
    >>> [check.host for check in assert_works_on_host([search], ["gemini-cli", "vscode"])]
    ['gemini-cli', 'vscode']
    >>> assert_works_on_host([search], "gemini-cli", style="type-array")
    Traceback (most recent call last):
      ...
    AssertionError: search does not work on every host asked for:
    error: search: gemini-cli refuses the tool (parameters.properties.limit: a type array other than [T, null]);
    use the portable shape (style="portable")
    """
    names = list(PROFILES) if host == "all" else [host] if isinstance(host, str) else list(host)
    checks = check_on_hosts(tools, [profile(name) for name in names], style=style)
    failing = [check for check in checks if not check.works]
    if failing:
        tools_named = ", ".join(dict.fromkeys(check.tool for check in failing))
        lines = "\n".join(line for check in failing for line in check.findings)
        raise AssertionError(f"{tools_named} does not work on every host asked for:\n{lines}")
    return checks
