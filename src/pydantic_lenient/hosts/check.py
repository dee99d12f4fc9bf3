"""Whether a tool works on a host: the host's listing, then each intended value through the host's
pipeline to the server, with the same profiles as the host matrix (issue 33, item 5).

For each top-level parameter, `trials` makes the values a model means and the forms models really
emit them in: the native value, digit strings, ``"false"``, JSON text, ``null`` and ``"null"``, a
value out of range, and the parameter left out. `verdicts` sends each through `HostProfile.call`
to the server and names the outcome:

* ``right``: the server got the value meant (or refused, clearly, a value it must refuse);
* ``refused``: the host or the server refused a value meant, with an error;
* ``ambiguous``: the host sent text that a text parameter takes as itself, and would send it
  whatever the listing: its filling of a parameter left out (Cursor's ``""`` for an optional
  string) or the value's JSON text (Claude Code's ``"null"``). No server can tell;
* ``wrong``: the server got another value than the one meant (VS Code's ``null`` → ``0``);
* ``unlisted``: the host refuses the tool's schema, so nothing can be called.

A tool works on a host (`problems` is empty) when the host lists it, its native values and its
left-out parameters arrive right, and no value arrives wrong; other forms may be refused clearly.
`host_findings` says, for each problem, which shape of the schema caused it and whether the
``portable`` style fixes it. The server is any callable that validates arguments and returns them
as JSON values, raising `ValueError` (pydantic's `ValidationError` is one) for a refusal: nothing
here imports pydantic.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_lenient.schema.styles import apply_style

from .profile import HostProfile, Listing, property_schemas, resolve

__all__ = (
    "REQUIRED_FORMS",
    "Outcome",
    "Server",
    "Trial",
    "Verdict",
    "host_findings",
    "problems",
    "shape_at",
    "trials",
    "verdicts",
)

Server = Callable[[dict[str, Any]], dict[str, Any]]
"""Validates a call's arguments and returns them as the tool receives them, as JSON values (a
parameter's name as the host sends it); raises `ValueError` to refuse them."""

Outcome = Literal["right", "refused", "ambiguous", "wrong", "unlisted"]

REQUIRED_FORMS = frozenset({"native", "unset"})
"""The forms that must arrive right for a tool to work: a value in its own JSON type, and a
parameter left out. The string forms may be refused clearly."""

_REFUSE: Any = object()


@dataclass(frozen=True)
class Trial:
    """One intended value of one parameter, in one form a model emits."""

    parameter: str
    form: str
    arguments: dict[str, Any]
    expected: Any
    """The arguments the server must deliver, or `_REFUSE` for a value it must refuse."""

    @property
    def must_refuse(self) -> bool:
        return self.expected is _REFUSE


@dataclass(frozen=True)
class Verdict:
    host: str
    parameter: str | None
    """None for the tool as a whole (a listing the host refuses)."""
    form: str
    outcome: Outcome
    detail: str = ""


def _native(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """An ordinary value ``schema`` admits, or None when none is made (a ``not``, a cycle)."""
    schema = resolve(schema, root)
    if not isinstance(schema, dict) or depth > 16:
        return None
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][-1]
    if "const" in schema:
        return schema["const"]
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list):
            for branch in _without_null(branches, root):
                value = _native(branch, root, depth + 1)
                if value is not None:
                    return value
            return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((name for name in kind if name != "null"), None)
    if kind == "integer":
        low, high = _bound(schema, "minimum", "exclusiveMinimum", 1), _bound(schema, "maximum", "exclusiveMaximum", -1)
        value = 7 if high is None else min(7, math.floor(high))
        return value if low is None else max(math.ceil(low), value)
    if kind == "number":
        low, high = (
            _bound(schema, "minimum", "exclusiveMinimum", 0.5),
            _bound(schema, "maximum", "exclusiveMaximum", -0.5),
        )
        number = 2.5 if low is None else max(low + 0.5, 2.5)
        return number if high is None else min(number, high)
    if kind == "boolean":
        return False
    if kind == "string":
        if schema.get("format") == "date":
            return "2026-05-01"
        if schema.get("format") == "date-time":
            return "2026-05-01T12:00:00Z"
        length = max(3, schema.get("minLength", 0)) if isinstance(schema.get("minLength", 0), int) else 3
        return "a" * min(length, schema.get("maxLength", length))
    if kind == "array":
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            return [_native(item, root, depth + 1) for item in prefix]
        item = _native(schema.get("items", {"type": "string"}), root, depth + 1)
        return [] if item is None else [item, item]
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties")
        if isinstance(properties, dict):
            required = schema.get("required", list(properties))
            return {name: _native(sub, root, depth + 1) for name, sub in properties.items() if name in required}
        return {}
    return None


def _bound(schema: Mapping[str, Any], inclusive: str, exclusive: str, step: float) -> float | None:
    """A finite bound of ``schema``, an exclusive one moved inside by ``step``; None without one."""
    for key, shift in ((inclusive, 0.0), (exclusive, step)):
        bound = schema.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool) and math.isfinite(bound):
            return bound + shift
    return None


def _without_null(branches: list[Any], root: Mapping[str, Any]) -> list[Any]:
    return [b for b in branches if not (isinstance(b, dict) and resolve(b, root).get("type") == "null")]


def _admits(schema: Any, root: Mapping[str, Any], kind: str) -> bool:
    """Whether ``schema`` names the JSON type ``kind`` at its top or in a top-level branch."""
    schema = resolve(schema, root)
    if not isinstance(schema, dict):
        return schema is True
    declared = schema.get("type")
    if declared == kind or (isinstance(declared, list) and kind in declared):
        return True
    branches = [*schema.get("anyOf", []), *schema.get("oneOf", [])]
    return any(_admits(branch, root, kind) for branch in branches if isinstance(branch, dict))


def _takes_text(schema: Any, root: Mapping[str, Any]) -> bool:
    """Whether a string is a value of ``schema`` as itself: a free text, not an enum or a format."""
    schema = resolve(schema, root)
    if not isinstance(schema, dict):
        return schema is True
    if schema.get("type") == "string" or (isinstance(schema.get("type"), list) and "string" in schema["type"]):
        return "enum" not in schema and "format" not in schema
    branches = [*schema.get("anyOf", []), *schema.get("oneOf", [])]
    return any(_takes_text(branch, root) for branch in branches if isinstance(branch, dict))


def _maximum(schema: Any, root: Mapping[str, Any]) -> Any:
    schema = resolve(schema, root)
    if not isinstance(schema, dict):
        return None
    if schema.get("type") in ("integer", "number") and isinstance(schema.get("maximum"), (int, float)):
        return schema["maximum"]
    for branch in _without_null([*schema.get("anyOf", [])], root):
        found = _maximum(branch, root)
        if found is not None:
            return found
    return None


def _delivered(server: Server, arguments: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return server(dict(arguments))
    except ValueError:
        return None


def trials(canonical: Mapping[str, Any], server: Server) -> list[Trial]:
    """The intended values of each top-level parameter of a tool, from its ``canonical`` schema
    (its JSON Schema with canonical types, as the ``strict`` style writes it), in every form a
    model emits them in. The other required parameters keep an ordinary value. Empty when no
    ordinary call can be made (a required parameter no value is made for, or one the server refuses).
    """
    root = dict(canonical)
    properties = property_schemas(root)
    listed = root.get("required")
    required = [name for name in listed if name in properties] if isinstance(listed, list) else []
    base = {name: _native(properties[name], root) for name in required}
    if any(value is None for value in base.values()) or _delivered(server, base) is None:
        return []
    found: list[Trial] = []
    for name, schema in properties.items():
        native = _native(schema, root)
        found.extend(_forms(name, schema, root, native, base, name in required, server))
    return found


def _forms(
    name: str,
    schema: Any,
    root: Mapping[str, Any],
    native: Any,
    base: dict[str, Any],
    required: bool,
    server: Server,
) -> Iterator[Trial]:
    def trial(form: str, value: Any, meant: Any = None, refuse: bool = False) -> Trial | None:
        arguments = {**base, name: value}
        if refuse:
            return Trial(name, form, arguments, _REFUSE)
        expected = _delivered(server, {**base, name: meant})
        return None if expected is None else Trial(name, form, arguments, expected)

    candidates: list[Trial | None] = []
    # Text a text parameter takes as itself ("7" for int | str) means that text: no text forms.
    text = _takes_text(schema, root)
    if native is not None:
        candidates.append(trial("native", native, native))
        form = _text_form(native)
        if form is not None and not text:
            candidates.append(trial(form, json.dumps(native), native))
    if _admits(schema, root, "null"):
        candidates.append(trial("null", None, None))
        if not text:
            candidates.append(trial('"null"', "null", None))
    if not required:
        expected = _delivered(server, base)
        if expected is not None:
            candidates.append(Trial(name, "unset", dict(base), expected))
    high = _maximum(schema, root)
    past = high + 1 if high is not None and not isinstance(high, bool) and math.isfinite(high) else None
    # Out of range only when the server refuses it sent as it should be (a union may take it otherwise).
    if past is not None and _delivered(server, {**base, name: past}) is None:
        candidates.append(trial("out of range", past, refuse=True))
        if not text:
            candidates.append(trial("out of range, digits", json.dumps(past), refuse=True))
    yield from (candidate for candidate in candidates if candidate is not None)


def _text_form(native: Any) -> str | None:
    """The name of the text form models write ``native`` in (``json.dumps`` of it), if any."""
    if isinstance(native, bool):
        return '"false"'
    if isinstance(native, (int, float)):
        return "digits"
    if isinstance(native, (list, dict)):
        return "JSON text"
    return None


def _same(left: Any, right: Any) -> bool:
    """Equal as JSON values: ``true`` is not ``1``, and NaN is NaN."""
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left) and math.isnan(right):
        return True
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    numbers = all(isinstance(side, (int, float)) and not isinstance(side, bool) for side in (left, right))
    return bool(left == right) and (numbers or type(left) is type(right))


def verdicts(
    host: HostProfile, advertised: Mapping[str, Any], tool_trials: list[Trial], server: Server
) -> list[Verdict]:
    """What ``host`` does with a tool listed with ``advertised``, for each of ``tool_trials``.

    Each trial judges its own parameter: the host's checks and conversions of the other parameters
    (each judged in its own trials) are left out, so a refusal or a change names its cause.
    """
    listing = host.listing(advertised)
    if not listing.accepted:
        return [Verdict(host.name, None, "listing", "unlisted", "; ".join(listing.reasons))]
    root = dict(advertised)
    found = []
    for trial in tool_trials:
        call = host.call(_alone(host, advertised, trial.parameter) or listing, trial.arguments)
        if call.arguments is None:
            outcome: Outcome = "right" if trial.must_refuse else "refused"
            found.append(Verdict(host.name, trial.parameter, trial.form, outcome, f"the host: {call.refusal}"))
            continue
        arguments = {name: value for name, value in trial.arguments.items() if name != trial.parameter}
        if trial.parameter in call.arguments:
            arguments[trial.parameter] = call.arguments[trial.parameter]
        sent = arguments.get(trial.parameter, "<unset>")
        emitted = trial.arguments.get(trial.parameter, "<unset>")
        try:
            delivered = server(arguments)
        except ValueError as error:
            outcome = "right" if trial.must_refuse else "refused"
            changed = f"the host sent {sent!r}; " if not _same(sent, emitted) else ""
            detail = f"{changed}the server: {_first_line(error)}"
            found.append(Verdict(host.name, trial.parameter, trial.form, outcome, detail))
            continue
        if not trial.must_refuse and _same(delivered, trial.expected):
            found.append(Verdict(host.name, trial.parameter, trial.form, "right"))
            continue
        detail = f"the model sent {emitted!r}, the host sent {sent!r}"
        detail += f", the tool got {delivered.get(trial.parameter, '<unset>')!r}"
        # Text a text parameter takes as itself, which the host makes the same whatever the listing:
        # its filling of a parameter left out (Cursor's ""), or the value's JSON text (Claude Code).
        as_text = trial.parameter not in trial.arguments or sent == json.dumps(emitted)
        schema = property_schemas(root).get(trial.parameter)
        outcome = "ambiguous" if isinstance(sent, str) and as_text and _takes_text(schema, root) else "wrong"
        found.append(Verdict(host.name, trial.parameter, trial.form, outcome, detail))
    return found


def _alone(host: HostProfile, advertised: Mapping[str, Any], parameter: str) -> Listing | None:
    """The host's listing of the tool with every other parameter taking anything (``{}``), or None
    when the host does not list that."""
    properties = property_schemas(advertised)
    alone = {**advertised, "properties": {name: sub if name == parameter else {} for name, sub in properties.items()}}
    listing = host.listing(alone)
    return listing if listing.accepted else None


def _first_line(error: Exception) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            first = errors(include_url=False)[0]
            return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
        except (TypeError, IndexError, KeyError):
            pass
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def problems(found: list[Verdict]) -> list[Verdict]:
    """The verdicts that mean the tool does not work on the host (see the module docs)."""
    return [
        verdict
        for verdict in found
        if verdict.outcome in ("unlisted", "wrong") or (verdict.outcome == "refused" and verdict.form in REQUIRED_FORMS)
    ]


_NULL_BRANCH = "an anyOf with a null branch"


def _named_shapes(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Iterator[str]:
    """The shapes hosts read wrong, in ``schema`` and its subschemas, outermost first."""
    if not isinstance(schema, dict) or depth > 16:
        return
    if isinstance(schema.get("type"), list):
        yield "a type array"
    options = schema.get("enum")
    if isinstance(options, list) and any(not isinstance(option, str) for option in options):
        yield "an enum that is not all strings"
    if schema.get("type") == "array" and "items" not in schema:
        yield "an array without items"
    items = schema.get("items")
    if isinstance(items, dict) and ("anyOf" in items or "oneOf" in items or isinstance(items.get("type"), list)):
        yield "a union in items"
    branches = schema.get("anyOf")
    if isinstance(branches, list):
        if any(isinstance(b, dict) and b.get("type") == "integer" for b in branches):
            yield "an integer branch in anyOf"
        if any(isinstance(b, dict) and "$ref" in b and "type" not in b for b in branches):
            yield "a $ref branch without a type"
        if any(isinstance(b, dict) and b.get("type") == "null" for b in branches):
            yield _NULL_BRANCH
    for keyword in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for branch in schema.get(keyword, []) if isinstance(schema.get(keyword), list) else []:
            yield from _named_shapes(branch, root, depth + 1)
    for keyword in ("items", "additionalProperties"):
        yield from _named_shapes(schema.get(keyword), root, depth + 1)
    if isinstance(schema.get("properties"), dict):
        for sub in schema["properties"].values():
            yield from _named_shapes(sub, root, depth + 1)
    reference = schema.get("$ref")
    if isinstance(reference, str) and depth < 4:
        target = resolve(schema, root)
        if target is not schema:
            yield from _named_shapes(target, root, depth + 1)


def shape_at(schema: Mapping[str, Any], parameter: str | None, form: str = "native") -> str:
    """The shape of ``parameter``'s schema a host may read wrong, for a message: for the ``form``
    of a value that failed, the shape that form meets (a null branch for ``null``), else the first.

    >>> from pydantic_lenient.hosts.check import shape_at
    >>> shape_at({"properties": {"limit": {"type": ["integer", "string"]}}}, "limit")
    'a type array'
    """
    if parameter is None:
        node: Any = schema
    else:
        node = property_schemas(schema).get(parameter)
    if form == "unset":
        return "a parameter left out"
    shapes = list(_named_shapes(node, schema))
    if form in ("null", '"null"') and _NULL_BRANCH in shapes:
        return _NULL_BRANCH
    return shapes[0] if shapes else "its schema"


def host_findings(
    tool: str, host: HostProfile, advertised: Mapping[str, Any], canonical: Mapping[str, Any], server: Server
) -> list[str]:
    """One line per shape of ``tool``'s listing that ``host`` refuses or corrupts, naming the fix:
    the ``portable`` style when it makes the tool work there, else what is left."""
    tool_trials = trials(canonical, server)
    found = problems(verdicts(host, advertised, tool_trials, server))
    if not found:
        return []
    portable = apply_style(advertised, "portable")
    left = {(v.parameter, v.form) for v in problems(verdicts(host, portable, tool_trials, server))}
    lines: list[str] = []
    seen: set[tuple[str | None, str]] = set()
    for verdict in found:
        what = "refuses" if verdict.outcome in ("unlisted", "refused") else "corrupts"
        kind = "a parameter left out" if verdict.form == "unset" else what
        if (verdict.parameter, kind) in seen:
            continue
        seen.add((verdict.parameter, kind))
        if advertised != portable and (verdict.parameter, verdict.form) not in left and (None, "listing") not in left:
            fix = 'use the portable shape (style="portable")'
        else:
            fix = "the portable shape does not fix it"
        if verdict.parameter is None:
            lines.append(f"error: {tool}: {host.name} refuses the tool ({verdict.detail}); {fix}")
        else:
            shape = shape_at(advertised, verdict.parameter, verdict.form)
            lines.append(
                f"error: {tool}: {host.name} {what} {shape} at properties.{verdict.parameter}"
                f" ({'left out' if verdict.form == 'unset' else f'the {verdict.form} value'}: {verdict.detail}); {fix}"
            )
    return lines
