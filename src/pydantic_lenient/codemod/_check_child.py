"""The child process `fix_file` checks a rewritten module in before it writes it.

The original file and the rewritten one (a copy beside nothing, importing the modules beside the
original) are both imported, as ``catalog`` imports a target (`pydantic_lenient.schema.loading`), and
their tools are compared: the rewritten module must import, list the same tools with the same
fields, and take every value the original takes (and advertises) with the same result. The values tried for each
field are a fixed corpus of JSON values and their text forms, with the numbers the original's schema
names (its bounds and lengths) and their neighbours first, so that a bound that moved, or changed, shows.

    python -m pydantic_lenient.codemod._check_child ORIGINAL.py REWRITTEN.py RESULT.json

``RESULT.json`` gets ``{"problems": [...]}``: one line each, none when the rewrite means what the
original meant.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ("problems",)

_CORPUS: list[Any] = [
    0,
    1,
    -1,
    7,
    2.5,
    -0.5,
    1e300,
    True,
    False,
    None,
    "",
    "x",
    "null",
    "true",
    "[]",
    "{}",
    [],
    {},
    [1],
]
_BOUND_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_LENGTH_KEYWORDS = ("minLength", "maxLength", "minItems", "maxItems")
_MAX_PROBLEMS = 5


def problems(original: str, rewritten: str) -> list[str]:
    """Why the module at ``rewritten`` does not mean what the one at ``original`` means, one line
    each (at most a few), or none."""
    from pydantic_lenient.schema.loading import TargetError, load_target

    try:
        before = _input_models(load_target(original))
    except (TargetError, TypeError, ValueError) as error:
        return [f"the original's tools cannot be read: {error}"]
    sys.path.insert(0, str(Path(original).resolve().parent))  # it imports what the original imports
    try:
        after = _input_models(load_target(rewritten))
        if [name for name, _ in after] != [name for name, _ in before]:
            listed = {name for name, _ in after}
            missing = [name for name, _ in before if name not in listed]
            return [f"{missing[0] if missing else 'tools'}: the rewritten module does not list this tool"]
        found: list[str] = []
        for (name, plain), (_, lenient) in zip(before, after, strict=True):
            found.extend(f"{name}.{problem}" for problem in _differences(plain, lenient))
            if len(found) >= _MAX_PROBLEMS:
                break
    except Exception as error:  # the rewritten module does not import, or a tool of it does not build
        return [f"the rewritten module's tools do not build: {type(error).__name__}: {error}"]
    return found[:_MAX_PROBLEMS]


def _input_models(tools: Any) -> list[tuple[str, Any]]:
    """The input model of each function and model `fix` rewrites in ``tools``, in order, by name."""
    from pydantic import BaseModel

    from pydantic_lenient.schema.catalog import model_from_function

    from .fix import _tool_sources

    models: list[tuple[str, Any]] = []
    for tool in _tool_sources(tools):
        if isinstance(tool, type) and issubclass(tool, BaseModel):
            models.append((tool.__qualname__, tool))
        elif callable(tool):
            models.append((tool.__qualname__, model_from_function(tool)))
    return models


def _differences(plain: Any, lenient: Any) -> Iterator[str]:
    """Each field whose rewritten form refuses, or reads otherwise, a value its original takes."""
    schema = plain.model_json_schema()
    properties = schema.get("properties", {})
    if set(properties) != set(lenient.model_json_schema().get("properties", {})):
        yield "fields: the rewritten tool has other fields"
        return
    host = _host(schema)
    # Every other field takes a value the original takes, so that each value is judged in a whole call.
    base: dict[str, Any] = {}
    for name, field_schema in properties.items():
        taken = (value for value in _values(field_schema) if not _verdict(plain, json.dumps({name: value}), name)[1])
        base[name] = next(taken, None)
    for name, field_schema in properties.items():
        for value in _values(field_schema):
            text = json.dumps({**base, name: value})
            expected, refused = _verdict(plain, text, name, strict=True)
            if refused or not _host_takes(host, name, value):
                continue
            got, lenient_refused = _verdict(lenient, text, name, strict=False)
            if lenient_refused or (expected is not _PARTIAL and got is not _PARTIAL and _differ(got, expected)):
                yield f"{name}: {json.dumps(value)[:60]} is taken as written but not as rewritten"
                break


def _host(schema: Any) -> Any:
    """A host's validator for one property of ``schema`` at a time (None: every value passes)."""
    from pydantic_lenient.schema.hosts import host_validator

    try:
        return host_validator({**schema, "required": []})
    except Exception:  # a schema the host's validator cannot read: the server's verdict alone
        return None


def _host_takes(host: Any, name: str, value: Any) -> bool:
    """Whether a host sends ``value`` for ``name`` as the original advertises it (pydantic's strict
    mode takes a few values its own schema refuses, such as ``true`` for ``Literal[1]``)."""
    return host is None or bool(host.is_valid({name: value}))


def _differ(got: Any, expected: Any) -> bool:
    """Whether two results differ, ``1`` and ``True`` (equal in Python) included."""
    return json.dumps(got, sort_keys=True) != json.dumps(expected, sort_keys=True)


_PARTIAL = object()  # the value passed, but the call is incomplete (another field is required)


def _verdict(model: Any, text: str, name: str, *, strict: bool = True) -> tuple[Any, bool]:
    """What ``model`` makes of the arguments ``text`` at ``name`` (`_PARTIAL` when another field
    refuses), and whether it refused the value at ``name``."""
    from pydantic import ValidationError

    try:
        validated = model.model_validate_json(text, strict=strict)
    except ValidationError as error:
        mine = [detail for detail in error.errors() if detail["loc"][:1] == (name,) and detail["type"] != "missing"]
        return _PARTIAL, bool(mine)
    return validated.model_dump(mode="json", by_alias=True).get(name, _PARTIAL), False


def _values(schema: Any) -> Iterator[Any]:
    """The corpus, and the numbers ``schema`` names (at any depth) with their neighbours, as numbers
    and as text."""
    numbers: set[float] = set()
    stack = [schema]
    while stack and len(numbers) < 50:
        item = stack.pop()
        if isinstance(item, dict):
            for keyword in (*_BOUND_KEYWORDS, *_LENGTH_KEYWORDS):
                value = item.get(keyword)
                if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                    numbers.update((value - 1, value, value + 1))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    for number in sorted(numbers):
        whole = int(number) if number == int(number) else number
        yield whole
        yield str(whole)
        yield "x" * int(whole) if isinstance(whole, int) and 0 <= whole <= 1_000 else whole
    yield from _CORPUS


def _main(original: str, rewritten: str, result_path: str) -> None:
    try:
        result = {"problems": problems(original, rewritten)}
    except BaseException as error:  # the module's code may raise anything, KeyboardInterrupt too
        result = {"problems": [f"the check was interrupted: {type(error).__name__}: {error}"]}
    with open(result_path, "w", encoding="utf-8") as file:
        file.write(json.dumps(result, ensure_ascii=True))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # not waiting for threads or exit handlers the module left behind


if __name__ == "__main__":  # pragma: no cover - run as the child
    _main(sys.argv[1], sys.argv[2], sys.argv[3])
