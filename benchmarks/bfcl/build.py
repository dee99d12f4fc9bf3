"""Build the repair benchmark's dataset from BFCL's function schemas and ground truth, in one command.

python benchmarks/bfcl/build.py [--wheel PATH]

Without ``--wheel`` it runs ``pip download --no-deps bfcl-eval==VERSION`` into a temporary folder and
reads the data files straight from the wheel (nothing is installed). It writes, under
``benchmarks/bfcl/data/``: ``tools.jsonl`` (one converted JSON Schema per tool), ``cases.jsonl``
(one call per line: what a model sent, and the truth) and ``build.json`` (what was read, what was
skipped and why, and how many cases of each family were made).

BFCL's ``possible_answer`` lists every acceptable value of each argument, ``""`` meaning "may be
left out"; the truth of a call is the first acceptable value of each argument (an argument whose
only option is ``""`` is left out).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema_rs

BFCL_VERSION = "2026.3.23"
DATA = Path(__file__).resolve().parent / "data"
# Categories whose answers are one JSON-like argument mapping per call, against Python-typed schemas.
CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
# Categories left out, and why (counted in build.json).
SKIPPED_CATEGORIES = {
    "simple_java": "arguments are Java source text in string form, typed with Java names",
    "simple_javascript": "arguments are JavaScript source text in string form",
    "multi_turn_base": "ground truth is executed call strings, not argument mappings",
    "multi_turn_long_context": "ground truth is executed call strings, not argument mappings",
    "multi_turn_miss_func": "ground truth is executed call strings, not argument mappings",
    "multi_turn_miss_param": "ground truth is executed call strings, not argument mappings",
    "memory": "agentic: answers are checked against memory state, not argument mappings",
    "web_search": "agentic: answers are checked against final text, not argument mappings",
}
# BFCL's Python type names, and the JSON Schema type each means. "any" is a schema with no type.
TYPES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "integer": "integer",
    "string": "string",
    "boolean": "boolean",
    "array": "array",
    "any": None,
}
# Keywords carried over as they are; "description" is dropped (no engine reads it) and "optional"
# is BFCL's own (its "required" list already says the same).
KEPT = ("enum", "default", "format", "maximum", "minimum")
BAIT_TEXTS = {
    "number": ("42", "3.14", "-7", "1e3"),
    "boolean": ("true", "False"),
    "null": ("null",),
    "json": ('["a", "b"]', '{"k": 1}', "[1, 2]"),
}
_SEPARATED = re.compile(r"[_-]")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NUMBER_TEXT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")


class Case(NamedTuple):
    """One call: ``sent`` is what the engine gets; ``truth`` what it must return."""

    id: str
    tool: str
    kind: str  # mangled | correct | bait | unrecoverable
    family: str
    sent: dict[str, Any]
    truth: dict[str, Any]

    def record(self) -> dict[str, Any]:
        return self._asdict()


class _Unconvertible(Exception):
    """A BFCL schema with a type this converter does not know."""


def convert(parameter: dict[str, Any]) -> dict[str, Any]:
    """BFCL's schema dialect as JSON Schema: its type names mapped, its own keywords dropped."""
    bfcl_type = parameter.get("type")
    if bfcl_type not in TYPES:
        raise _Unconvertible(f"type {bfcl_type!r}")
    schema: dict[str, Any] = {}
    json_type = TYPES[bfcl_type]
    if json_type is not None:
        schema["type"] = json_type
    for keyword in KEPT:
        if keyword in parameter:
            schema[keyword] = parameter[keyword]
    if json_type == "object" and "properties" in parameter:
        schema["properties"] = {name: convert(sub) for name, sub in parameter["properties"].items()}
        if parameter.get("required"):
            schema["required"] = list(parameter["required"])
    if json_type == "array" and isinstance(parameter.get("items"), dict):
        schema["items"] = convert(parameter["items"])
    return schema


def _choose(options: list[Any], schema: dict[str, Any]) -> Any:
    """The first acceptable value, or `_OMIT` when the options are only ``""`` ("may be left out") and
    ``null`` (BFCL's "the default", which its schemas give as ``"default": null`` on non-nullable types)."""
    for option in options:
        if option == "" or option is None:
            continue
        if isinstance(option, dict) and "properties" in schema:
            return _truth(option, schema)
        return option
    return _OMIT


_OMIT: Any = object()


def _truth(options_by_name: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties", {})
    truth = {}
    for name, options in options_by_name.items():
        value = _choose(options, properties.get(name, {})) if isinstance(options, list) else options
        if value is not _OMIT:
            truth[name] = value
    return truth


def _undeclared(value: Any, schema: dict[str, Any]) -> bool:
    """Whether ``value`` has a member its schema does not declare, at any depth."""
    if isinstance(value, dict) and "properties" in schema:
        properties = schema["properties"]
        return any(name not in properties or _undeclared(member, properties[name]) for name, member in value.items())
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return any(_undeclared(item, schema["items"]) for item in value)
    return False


def _is_number_text(text: str) -> bool:
    return _NUMBER_TEXT.fullmatch(text) is not None and json.dumps(json.loads(text)) == text


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _other_convention(name: str) -> str | None:
    """``name`` in snake_case if it is camelCase, in camelCase if it is snake_case; None if one word
    (or a name with a leading or trailing separator, which no convention change produces)."""
    if name.strip("_-") != name:
        return None
    if _SEPARATED.search(name):
        head, *rest = (part for part in _SEPARATED.split(name) if part)
        renamed = head + "".join(part[:1].upper() + part[1:] for part in rest)
    elif _HUMP.search(name):
        renamed = _HUMP.sub("_", name).lower()
    else:
        return None
    return renamed if renamed != name else None


def _top_level(truth: dict[str, Any], schema: dict[str, Any], *types: str) -> list[str]:
    properties = schema.get("properties", {})
    names = []
    for name, value in truth.items():
        declared = properties.get(name, {}).get("type")
        if declared in types and not (declared == "number" and isinstance(value, bool)):
            names.append(name)
    return names


def _string_fields(truth: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    return [
        name
        for name, value in truth.items()
        if properties.get(name, {}).get("type") == "string"
        and "enum" not in properties[name]
        and "format" not in properties[name]
        and isinstance(value, str)
    ]


def _nested_structures(value: Any, schema: dict[str, Any]) -> Iterator[tuple[list[str | int], Any]]:
    """Paths (below the top level) of arrays and objects whose schema says array or object."""
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name, member in value.items():
            sub = properties.get(name, {})
            if sub.get("type") in ("array", "object") and isinstance(member, (list, dict)):
                yield [name], member
            for path, found in _nested_structures(member, sub):
                yield [name, *path], found
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        sub = schema["items"]
        for index, item in enumerate(value):
            if sub.get("type") in ("array", "object") and isinstance(item, (list, dict)):
                yield [index], item
            for path, found in _nested_structures(item, sub):
                yield [index, *path], found


def _replaced(value: Any, path: list[str | int], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replaced(copy[head], rest, new)  # type: ignore[index]
    return copy


def _cases(
    call_id: str, tool: str, schema: dict[str, Any], truth: dict[str, Any], rng: random.Random
) -> Iterator[Case]:
    def case(kind: str, family: str, sent: dict[str, Any], expected: dict[str, Any] | None = None) -> Case:
        return Case(f"{call_id}/{family}", tool, kind, family, sent, truth if expected is None else expected)

    yield case("correct", "correct", truth)
    scalars = _top_level(truth, schema, "integer", "number", "boolean")
    if scalars:
        yield case("mangled", "stringified_scalar", {**truth, **{n: _scalar_text(truth[n]) for n in scalars}})
    booleans = _top_level(truth, schema, "boolean")
    if booleans:
        spelled = {n: rng.choice(("True", "TRUE") if truth[n] else ("False", "FALSE")) for n in booleans}
        yield case("mangled", "boolean_letter_case", {**truth, **spelled})
    structures = _top_level(truth, schema, "array", "object")
    if structures:
        yield case("mangled", "json_text_top", {**truth, **{n: json.dumps(truth[n]) for n in structures}})
        name = rng.choice(structures)
        yield case("mangled", "json_text_twice", {**truth, name: json.dumps(json.dumps(truth[name]))})
    properties = schema.get("properties", {})
    nested = [
        ([name, *path], found)
        for name, value in truth.items()
        for path, found in _nested_structures(value, properties.get(name, {}))
    ]
    if nested:
        path, found = rng.choice(nested)
        yield case("mangled", "json_text_nested", _replaced(truth, path, json.dumps(found)))
    renames = {n: r for n in truth if (r := _other_convention(n)) and r not in schema.get("properties", {})}
    if renames:
        yield case("mangled", "name_case_convention", {renames.get(n, n): v for n, v in truth.items()})
    number_strings = [n for n in _string_fields(truth, schema) if _is_number_text(truth[n])]
    if number_strings:
        yield case("mangled", "number_for_string", {**truth, **{n: json.loads(truth[n]) for n in number_strings}})
        yield case("bait", "bait_natural_number_text", truth)
    strings = _string_fields(truth, schema)
    if strings:
        looks_like = rng.choice(sorted(BAIT_TEXTS))
        name = rng.choice(strings)
        bait = {**truth, name: rng.choice(BAIT_TEXTS[looks_like])}
        yield case("bait", f"bait_{looks_like}_text", bait, bait)
    unrecoverable = _unrecoverable(truth, schema, rng)
    if unrecoverable is not None:
        family, sent = unrecoverable
        yield case("unrecoverable", family, sent, sent)


def _unrecoverable(
    truth: dict[str, Any], schema: dict[str, Any], rng: random.Random
) -> tuple[str, dict[str, Any]] | None:
    choices = [("unrecoverable_fraction", {**truth, n: f"{truth[n]}.5"}) for n in _top_level(truth, schema, "integer")]
    for name in _top_level(truth, schema, "integer", "number"):
        value = truth[name]
        grouped = f"{value:,}" if isinstance(value, int) and abs(value) >= 1000 else "1,000"
        choices.append(("unrecoverable_grouped_digits", {**truth, name: grouped}))
    choices += [
        ("unrecoverable_yes_no", {**truth, n: "yes" if truth[n] else "no"})
        for n in _top_level(truth, schema, "boolean")
    ]
    return rng.choice(choices) if choices else None


def _any_typed_variant(
    call_id: str, tool: str, schema: dict[str, Any], truth: dict[str, Any]
) -> tuple[str, dict[str, Any], Case] | None:
    """The same tool with one structured parameter declared ``{}`` (any type), sent as JSON text."""
    structures = _top_level(truth, schema, "array", "object")
    if not structures:
        return None
    name = structures[0]
    variant = {**schema, "properties": {**schema["properties"], name: {}}}
    variant_tool = f"{tool}#any:{name}"
    sent = {**truth, name: json.dumps(truth[name])}
    return (
        variant_tool,
        variant,
        Case(f"{call_id}/any_typed_as_string", variant_tool, "mangled", "any_typed_as_string", sent, truth),
    )


def _wrapped_variant(
    call_id: str, tool: str, schema: dict[str, Any], truth: dict[str, Any]
) -> tuple[str, dict[str, Any], Case] | None:
    """The same tool taking its parameters as one object (as a tool with one model argument does),
    with a structured parameter inside it sent as JSON text: a nested case BFCL's flat tools rarely give."""
    structures = _top_level(truth, schema, "array", "object")
    if not structures:
        return None
    name = structures[0]
    variant = {"type": "object", "properties": {"request": schema}, "required": ["request"]}
    variant_tool = f"{tool}#wrapped"
    sent = {"request": {**truth, name: json.dumps(truth[name])}}
    case = Case(
        f"{call_id}/json_text_nested_wrapped", variant_tool, "mangled", "json_text_nested", sent, {"request": truth}
    )
    return variant_tool, variant, case


def _read_wheel(wheel: Path) -> dict[str, list[dict[str, Any]]]:
    files: dict[str, list[dict[str, Any]]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            relative = name.removeprefix("bfcl_eval/data/")
            category = re.fullmatch(r"(?:possible_answer/)?BFCL_v4_([a-z_]+)\.json", relative)
            if category and (category[1] in CATEGORIES or category[1] in SKIPPED_CATEGORIES):
                text = archive.read(name).decode("utf-8")
                files[relative] = [json.loads(line) for line in text.splitlines() if line]
    return files


def build(wheel: Path) -> dict[str, Any]:
    files = _read_wheel(wheel)
    tools: dict[str, dict[str, Any]] = {}
    cases: list[Case] = []
    skipped: Counter[str] = Counter()
    for category, reason in SKIPPED_CATEGORIES.items():
        skipped[f"category {category}: {reason}"] += len(files.get(f"BFCL_v4_{category}.json", []))
    calls = 0
    for category in CATEGORIES:
        questions = files[f"BFCL_v4_{category}.json"]
        answers = {entry["id"]: entry for entry in files[f"possible_answer/BFCL_v4_{category}.json"]}
        for question in questions:
            functions = {function["name"]: function for function in question["function"]}
            for index, call in enumerate(answers[question["id"]]["ground_truth"]):
                ((name, options),) = call.items()
                calls += 1
                call_id = f"{question['id']}/{index}"
                try:
                    schema = convert(functions[name]["parameters"])
                except _Unconvertible as error:
                    skipped[f"call: a parameter has {error}"] += 1
                    continue
                truth = _truth(options, schema)
                if not jsonschema_rs.validator_for(schema).is_valid(truth):
                    skipped["call: its first acceptable answer does not validate against the converted schema"] += 1
                    continue
                if not truth:
                    skipped["call: no arguments"] += 1
                    continue
                if _undeclared(truth, schema):
                    skipped["call: its first acceptable answer has a member the schema does not declare"] += 1
                    continue
                tool = f"{question['id']}:{name}"
                tools[tool] = schema
                rng = random.Random(call_id)
                cases.extend(_cases(call_id, tool, schema, truth, rng))
                for variant in (
                    _any_typed_variant(call_id, tool, schema, truth),
                    _wrapped_variant(call_id, tool, schema, truth),
                ):
                    if variant is not None:
                        variant_tool, variant_schema, variant_case = variant
                        tools[variant_tool] = variant_schema
                        cases.append(variant_case)
    for case in cases:  # the dataset's own promises, checked before it is written
        validator = jsonschema_rs.validator_for(tools[case.tool])
        if case.kind == "unrecoverable":
            assert not validator.is_valid(case.sent), case.id
            assert case.truth == case.sent, case.id
        else:
            assert validator.is_valid(case.truth), case.id
        assert case.kind != "mangled" or case.sent != case.truth, case.id
    DATA.mkdir(exist_ok=True)
    with (DATA / "tools.jsonl").open("w", encoding="utf-8") as file:
        for tool, schema in tools.items():
            file.write(json.dumps({"tool": tool, "schema": schema}, ensure_ascii=False, separators=(",", ":")) + "\n")
    with (DATA / "cases.jsonl").open("w", encoding="utf-8") as file:
        for case in cases:
            file.write(json.dumps(case.record(), ensure_ascii=False, separators=(",", ":")) + "\n")
    summary = {
        "source": f"bfcl-eval {BFCL_VERSION} (PyPI wheel), Apache-2.0",
        "categories": list(CATEGORIES),
        "calls_read": calls,
        "tools": len(tools),
        "cases": len(cases),
        "skipped": dict(sorted(skipped.items())),
        "cases_by_family": dict(sorted(Counter(f"{c.kind}/{c.family}" for c in cases).items())),
    }
    (DATA / "build.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def _download(folder: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", f"bfcl-eval=={BFCL_VERSION}", "-d", str(folder)]
    subprocess.run(command, check=True, capture_output=True)
    return next(folder.glob("bfcl_eval-*.whl"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="a downloaded bfcl_eval wheel (default: pip download it)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        wheel = arguments.wheel or _download(Path(folder))
        summary = build(wheel)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
