"""The ``pydantic-lenient`` command line.

    pydantic-lenient catalog TARGET [--style type-array|any-of|strict] [--check] [--output FILE]
    pydantic-lenient normalize --rules RULES.json --tool NAME ARGUMENTS_JSON
    pydantic-lenient stats STATS.json
    pydantic-lenient repair --schema SCHEMA.json [--tool NAME] ARGUMENTS_JSON

Also runs as ``python -m pydantic_lenient``. A bad target or bad input is one line on stderr and
exit code 2, never a traceback; ``--check`` exits 1 when the audit finds an error.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .schema_styles import STYLES

__all__ = ("CommandError", "format_stats", "load_target", "main")

PROGRAM = "pydantic-lenient"
# Module-level names that conventionally hold a module's tools, in the order they are looked for.
_TOOL_NAMES = ("TOOLS", "tools", "mcp", "server", "app")


class CommandError(Exception):
    """A problem with what the command was given, reported as one line and exit code 2."""


def load_target(target: str) -> Any:
    """Import ``module``, ``module:attr`` or ``path/to/file.py[:attr]`` and return its tools.

    Without ``attr``, the module's ``TOOLS`` (or ``tools``, ``mcp``, ``server``, ``app``) is used,
    or else the one MCP server object it defines.
    """
    location, _, attribute = target.partition(":") if not _is_windows_path(target) else (target, "", "")
    module = _import(location)
    if attribute:
        value: Any = module
        for part in attribute.split("."):
            if not hasattr(value, part):
                raise CommandError(f"{location} has no attribute {attribute!r}")
            value = getattr(value, part)
        return value
    for name in _TOOL_NAMES:
        if hasattr(module, name):
            return getattr(module, name)
    servers = [value for value in vars(module).values() if _looks_like_server(value)]
    if len(servers) == 1:
        return servers[0]
    raise CommandError(
        f"nothing tool-like found in {location}: name the tools with {location}:ATTR, "
        f"or define one of {', '.join(_TOOL_NAMES)}"
    )


def _is_windows_path(target: str) -> bool:
    return len(target) > 2 and target[1] == ":" and target[2] in "\\/"


def _looks_like_server(value: Any) -> bool:
    from .catalog import _is_fastmcp_server, _is_official_sdk_server

    return not isinstance(value, type) and (_is_official_sdk_server(value) or _is_fastmcp_server(value))


def _import(location: str) -> Any:
    path = Path(location)
    try:
        if location.endswith(".py") or path.is_file():
            if not path.is_file():
                raise CommandError(f"no such file: {location}")
            # Let the file import the modules beside it, as `python path/to/file.py` would.
            sys.path.insert(0, str(path.resolve().parent))
            spec = importlib.util.spec_from_file_location(f"_pydantic_lenient_target_{path.stem}", path)
            if spec is None or spec.loader is None:
                raise CommandError(f"cannot import {location}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            return module
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(location)
    except CommandError:
        raise
    except (Exception, SystemExit) as error:  # anything the target's own code raises while importing
        raise CommandError(f"cannot import {location}: {type(error).__name__}: {error}") from None


def _write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise CommandError(f"cannot write {output}: {error.strerror}") from None


def _catalog(arguments: argparse.Namespace) -> int:
    from .audit import audit, format_findings
    from .catalog import tool_catalog

    tools = load_target(arguments.target)
    try:
        catalog = tool_catalog(tools, style=arguments.style)
        findings = audit(tools) if arguments.check else []
    except Exception as error:  # a tool whose model or schema cannot be built
        raise CommandError(f"{arguments.target}: {type(error).__name__}: {error}") from None
    _write(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n", arguments.output)
    if not arguments.check:
        return 0
    print(format_findings(findings), file=sys.stderr)
    return 1 if any(finding.level == "error" for finding in findings) else 0


def _read_json_argument(text: str, what: str) -> Any:
    source = sys.stdin.read() if text == "-" else text
    try:
        return json.loads(source)
    except ValueError as error:
        raise CommandError(f"{what} is not valid JSON: {error}") from None


def _normalize(arguments: argparse.Namespace) -> int:
    from .normalizer import NormalizationConflict, Normalizer, RuleError

    try:
        normalizer = Normalizer.from_file(arguments.rules) if arguments.rules else Normalizer()
    except RuleError as error:
        raise CommandError(str(error)) from None
    call = _read_json_argument(arguments.arguments, "ARGUMENTS")
    if not isinstance(call, dict):
        raise CommandError(f"ARGUMENTS must be a JSON object, not {type(call).__name__}")
    try:
        result = normalizer.apply(arguments.tool, call)
    except NormalizationConflict as error:
        raise CommandError(str(error)) from None
    output = {"arguments": result.arguments, "applied": result.applied}
    _write(json.dumps(output, indent=2, ensure_ascii=False) + "\n", None)
    return 0


def _read_json_file(path: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None
    except ValueError as error:
        raise CommandError(f"{path} is not valid JSON: {error}") from None


def _stats(arguments: argparse.Namespace) -> int:
    stats = _read_json_file(arguments.file)
    if not isinstance(stats, dict) or "total_processed" not in stats:
        raise CommandError(f"{arguments.file} is not a normalizer stats file")
    _write(format_stats(stats) + "\n", None)
    return 0


def _repair(arguments: argparse.Namespace) -> int:
    schema = _schema_for(_read_json_file(arguments.schema), arguments.tool, arguments.schema)
    call = _read_json_argument(arguments.arguments, "ARGUMENTS")
    try:
        from .repair import Repairer

        result = Repairer(schema).repair(call)
    except ImportError as error:
        raise CommandError(str(error)) from None
    output = {"arguments": result.arguments, "repairs": result.repairs, "valid": result.valid}
    _write(json.dumps(output, indent=2, ensure_ascii=False) + "\n", None)
    return 0 if result.valid else 1


def _schema_for(document: Any, tool: str | None, source: str) -> Any:
    """The schema to repair against: the document itself, or a tool's inputSchema in a catalog."""
    if isinstance(document, dict) and isinstance(document.get("tools"), list):
        if tool is None:
            raise CommandError(f"{source} is a tools/list catalog: name the tool with --tool")
        for entry in document["tools"]:
            if isinstance(entry, dict) and entry.get("name") == tool:
                schema = entry.get("inputSchema", entry.get("input_schema"))
                if not isinstance(schema, (dict, bool)):
                    raise CommandError(f"tool {tool!r} in {source} has no inputSchema")
                return schema
        raise CommandError(f"no tool named {tool!r} in {source}")
    if tool is not None:
        raise CommandError(f"--tool needs a tools/list catalog, and {source} is a plain schema")
    if not isinstance(document, (dict, bool)):
        raise CommandError(f"{source} is not a JSON schema")
    return document


def format_stats(stats: dict[str, Any]) -> str:
    """A normalizer stats file as readable tables."""
    processed, normalized = stats.get("total_processed", 0), stats.get("total_normalized", 0)
    share = f" ({normalized / processed:.1%})" if processed else ""
    lines = [
        f"calls processed: {processed}, normalized: {normalized}{share}",
        f"last updated: {stats.get('last_updated') or 'never'}",
        "",
        f"{'tool':30} {'processed':>10} {'normalized':>11}",
    ]
    for tool, counts in sorted(stats.get("by_tool", {}).items()):
        lines.append(f"{tool:30} {counts.get('processed', 0):>10} {counts.get('normalized', 0):>11}")
    lines += ["", f"{'rule':32} {'type':18} {'hits':>6}  tools"]
    for rule in sorted(stats.get("by_rule", {}).values(), key=lambda rule: (-rule.get("hits", 0), rule["rule_id"])):
        tools = ", ".join(rule.get("tools", []))
        lines.append(f"{rule['rule_id']:32} {rule.get('type', ''):18} {rule.get('hits', 0):>6}  {tools}")
    recent = stats.get("recent_normalizations", [])
    lines += ["", f"recent normalizations: {len(recent)}"]
    for entry in recent[-10:]:
        rule_ids = ", ".join(applied.get("rule_id", "?") for applied in entry.get("applied", []))
        lines.append(f"  {entry.get('ts')}  {entry.get('tool')}: {rule_ids}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROGRAM, description="LLM tool inputs that survive wrong JSON types.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    catalog = commands.add_parser(
        "catalog",
        help="print the MCP tools/list catalog of a module's tools",
        description="Print the tools/list catalog (JSON) of TARGET: module, module:attr, or file.py[:attr].",
    )
    catalog.add_argument("target", metavar="TARGET")
    catalog.add_argument("--style", choices=STYLES, default="type-array", help="input schema style")
    catalog.add_argument(
        "--check", action="store_true", help="audit for fields that are not lenient; exit 1 on an error"
    )
    catalog.add_argument("--output", metavar="FILE", help="write the catalog to FILE instead of stdout")
    catalog.set_defaults(run=_catalog)

    normalize = commands.add_parser(
        "normalize",
        help="apply normalizer rules to one tool call",
        description="Print the normalized arguments of one call and the normalizations applied.",
    )
    normalize.add_argument("--rules", metavar="RULES.json", help="rules file (a list, or {'rules': [...]})")
    normalize.add_argument("--tool", required=True, metavar="NAME", help="the tool being called")
    normalize.add_argument("arguments", metavar="ARGUMENTS_JSON", help="the call's arguments as JSON, or - for stdin")
    normalize.set_defaults(run=_normalize)

    stats = commands.add_parser("stats", help="print a normalizer stats file as tables")
    stats.add_argument("file", metavar="STATS.json")
    stats.set_defaults(run=_stats)

    repair = commands.add_parser(
        "repair",
        help="repair a call's arguments against a tool's inputSchema",
        description="Print the repaired arguments and the repairs; exit 1 if they are still invalid.",
    )
    repair.add_argument("--schema", required=True, metavar="SCHEMA.json", help="a JSON schema, or a tools/list catalog")
    repair.add_argument("--tool", metavar="NAME", help="the tool, when --schema is a catalog")
    repair.add_argument("arguments", metavar="ARGUMENTS_JSON", help="the arguments as JSON, or - for stdin")
    repair.set_defaults(run=_repair)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    arguments = parser.parse_args(argv)
    try:
        code: int = arguments.run(arguments)
    except CommandError as error:
        one_line = " | ".join(line.strip() for line in str(error).splitlines() if line.strip())
        print(f"{PROGRAM}: error: {one_line}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
