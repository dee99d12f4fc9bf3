"""The ``pydantic-lenient`` command line.

    pydantic-lenient catalog TARGET [--style type-array|any-of|strict] [--target mcp|...] [--check] [--output FILE]
    pydantic-lenient normalize --rules RULES.json --tool NAME ARGUMENTS_JSON
    pydantic-lenient stats STATS.json
    pydantic-lenient repair --schema SCHEMA.json [--tool NAME] ARGUMENTS_JSON
    pydantic-lenient fix PATH... [--diff]
    pydantic-lenient proxy [--style STYLE] [--rules RULES.json] [--log-dir DIR [--sample-chars N]] -- COMMAND [ARGS...]
    pydantic-lenient suggest LOG_DIR [--rules-out FILE] [--min-count N]
    pydantic-lenient dashboard LOG_DIR [--host HOST] [--port PORT] [--html FILE] [--min-count N]

Also runs as ``python -m pydantic_lenient``. Exit codes: 0 ok, 1 a check or repair failed, 2 bad
usage or input. Every failure is one line on stderr naming its cause, never a traceback.

To add a command: write ``_name(arguments) -> int`` and register it in ``_parser()`` with
``_command(commands, "name", help=..., description=..., run=_name)`` (both texts are required, and a
test checks every command has them). Raise ``CommandError("what is wrong")`` for anything wrong with
what the command was given (one line, exit 2); return 1 when a check or repair fails, else 0.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from pydantic_lenient._version import __version__
from pydantic_lenient.schema.loading import TargetError, load_target
from pydantic_lenient.schema.styles import STYLES
from pydantic_lenient.schema.targets import TARGETS

__all__ = ("CommandError", "format_stats", "main")

PROGRAM = "pydantic-lenient"
EXIT_CODES = "exit codes: 0 ok, 1 a check or repair failed, 2 bad usage or input"


class CommandError(Exception):
    """A problem with what the command was given, reported as one line and exit code 2."""


def _write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise CommandError(f"cannot write {output}: {error.strerror}") from None


def _catalog(arguments: argparse.Namespace) -> int:
    from pydantic_lenient.schema.audit import audit, format_findings
    from pydantic_lenient.schema.catalog import tool_catalog

    try:
        tools = load_target(arguments.target)
    except TargetError as error:
        raise CommandError(str(error)) from None
    try:
        catalog = tool_catalog(tools, style=arguments.style, target=arguments.schema_target)
        losses = _target_losses(tools, arguments.style, arguments.schema_target)
        findings = audit(tools) if arguments.check else []
    except Exception as error:  # a tool whose model or schema cannot be built
        raise CommandError(f"{arguments.target}: {type(error).__name__}: {error}") from None
    _write(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n", arguments.output)
    for line in losses:
        print(line, file=sys.stderr)
    if not arguments.check:
        return 0
    print(format_findings(findings), file=sys.stderr)
    return 1 if any(finding.level == "error" for finding in findings) else 0


def _target_losses(tools: Any, style: Any, target: Any) -> list[str]:
    """One ``lost:`` line per place a target could not say what the validator means."""
    from pydantic_lenient.schema.catalog import tool_specs
    from pydantic_lenient.schema.targets import target_schema

    if target == "mcp":
        return []
    return [
        f"lost: {spec.name}{loss.location}: {loss.what}"
        for spec in tool_specs(tools)
        for loss in target_schema(spec.input_model, target, style=style).losses
    ]


def _parse_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise CommandError(f"{what} is not valid JSON: {error}") from None
    except RecursionError:
        raise CommandError(f"{what} is nested too deeply") from None


def _read_arguments(text: str) -> dict[str, Any]:
    """A call's ARGUMENTS_JSON (or ``-``: stdin), which must be a JSON object."""
    try:
        source = sys.stdin.read() if text == "-" else text
    except (OSError, ValueError) as error:
        raise CommandError(f"cannot read ARGUMENTS from stdin: {error}") from None
    call = _parse_json(source, "ARGUMENTS")
    if not isinstance(call, dict):
        raise CommandError(f"ARGUMENTS must be a JSON object, not {type(call).__name__}")
    return call


# Deeper arguments are refused: no tool takes them, and printing them back would overflow the stack.
_MAX_ARGUMENT_DEPTH = 100


def _check_printable(value: Any, what: str) -> None:
    """Refuse a value nested deeper than `_MAX_ARGUMENT_DEPTH`, or holding a lone surrogate (which
    JSON text can escape, and no output encoding can carry)."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > _MAX_ARGUMENT_DEPTH:
            raise CommandError(f"{what} is nested deeper than {_MAX_ARGUMENT_DEPTH} levels")
        if isinstance(item, dict):
            pending.extend((key, depth) for key in item)
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
        elif isinstance(item, str) and not _encodable(item):
            raise CommandError(f"{what} holds a lone surrogate ({_first_surrogate(item)}), which is not text")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _first_surrogate(text: str) -> str:
    return next(f"\\u{ord(char):04x}" for char in text if "\ud800" <= char <= "\udfff")


def _print_json(document: Any) -> None:
    try:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    except (RecursionError, ValueError) as error:
        raise CommandError(f"cannot print the result as JSON: {type(error).__name__}") from None
    if not _encodable(text):
        raise CommandError(f"the result holds a lone surrogate ({_first_surrogate(text)}), which is not text")
    _write(text, None)


def _normalize(arguments: argparse.Namespace) -> int:
    from pydantic_lenient.normalizer.engine import NormalizationConflict, Normalizer, RuleError

    try:
        normalizer = Normalizer.from_file(arguments.rules) if arguments.rules else Normalizer()
    except RuleError as error:
        raise CommandError(str(error)) from None
    call = _read_arguments(arguments.arguments)
    _check_printable(call, "ARGUMENTS")
    try:
        result = normalizer.apply(arguments.tool, call)
    except NormalizationConflict as error:
        raise CommandError(str(error)) from None
    _print_json({"arguments": result.arguments, "applied": result.applied})
    return 0


def _read_json_file(path: str) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None
    except ValueError as error:
        raise CommandError(f"{path} is not UTF-8 text: {error}") from None
    return _parse_json(text, path)


def _stats(arguments: argparse.Namespace) -> int:
    from pydantic_lenient.normalizer.stats import StatsFileError, load_stats

    try:
        stats = load_stats(arguments.file)
    except StatsFileError as error:
        raise CommandError(str(error)) from None
    text = format_stats(dict(stats)) + "\n"
    # A name in the file may hold a lone surrogate (JSON can escape one): show it escaped.
    _write(text.encode("utf-8", "backslashreplace").decode("utf-8"), None)
    return 0


def _repair(arguments: argparse.Namespace) -> int:
    """Exit 0 when the repaired arguments are valid, 1 when they are still invalid (with the
    reasons on stderr), 2 for bad input: a schema the validator cannot use, arguments that are not
    a JSON object."""
    schema = _schema_for(_read_json_file(arguments.schema), arguments.tool, arguments.schema)
    call = _read_arguments(arguments.arguments)
    try:
        from pydantic_lenient.repair.engine import Repairer
    except ImportError as error:
        raise CommandError(str(error)) from None
    repairer = Repairer(schema)
    if repairer.schema_error is not None:
        raise CommandError(f"{arguments.schema}: the schema cannot be used: {repairer.schema_error}")
    result = repairer.repair(call)
    output = {
        "arguments": result.arguments,
        "repairs": result.repairs,
        "valid": result.valid,
        "reasons": list(result.reasons),
    }
    _write(json.dumps(output, indent=2, ensure_ascii=False) + "\n", None)
    sys.stdout.flush()  # the summary line follows the output, also where both go to one pipe
    if result.valid:
        print(f"{PROGRAM}: valid after {len(result.repairs)} repair(s)", file=sys.stderr)
        return 0
    reasons = "; ".join(f"{reason['path'] or '/'}: {_one_line(reason['message'])}" for reason in result.reasons)
    print(f"{PROGRAM}: still invalid after {len(result.repairs)} repair(s): {reasons}", file=sys.stderr)
    return 1


def _one_line(text: str) -> str:
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


def _proxy(arguments: argparse.Namespace) -> int:
    from pydantic_lenient.normalizer.engine import Normalizer, RuleError
    from pydantic_lenient.observe.logdir import LogDirError

    try:
        from pydantic_lenient.proxy.stdio import run_proxy

        normalizer = Normalizer.from_file(arguments.rules) if arguments.rules else None
    except (ImportError, RuleError) as error:
        raise CommandError(str(error)) from None
    for name in ("ping_interval", "ping_timeout"):
        if not getattr(arguments, name) > 0:
            raise CommandError(f"--{name.replace('_', '-')} must be a positive number of seconds")
    if arguments.sample_chars < 0 or (arguments.sample_chars and arguments.log_dir is None):
        raise CommandError("--sample-chars needs --log-dir and a number of characters, 0 or more")
    try:
        return run_proxy(
            arguments.upstream,
            style=arguments.style,
            normalizer=normalizer,
            log_dir=arguments.log_dir,
            sample_chars=arguments.sample_chars,
            ping_interval=arguments.ping_interval,
            ping_timeout=arguments.ping_timeout,
        )
    except LogDirError as error:  # a corrupt outcomes file, found before the upstream starts
        raise CommandError(str(error)) from None


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


def _fix(arguments: argparse.Namespace) -> int:
    try:
        from pydantic_lenient.codemod.fix import fix_file
    except ImportError as error:
        raise CommandError(f"fix needs LibCST: pip install -e '.[codemod]' from a clone ({error})") from None
    for path in arguments.paths:
        if not Path(path).is_file():
            raise CommandError(f"no such file: {path}")
        try:
            result = fix_file(path, write=not arguments.diff)
        except TargetError as error:
            raise CommandError(str(error)) from None
        except Exception as error:  # a file that does not parse, or whose tools cannot be read
            raise CommandError(f"{path}: {type(error).__name__}: {error}") from None
        if arguments.diff:
            sys.stdout.write(result.diff())
            continue
        for change in result.changes:
            print(change, file=sys.stderr)
        print(f"{path}: {len(result.changes)} annotation(s) made lenient", file=sys.stderr)
    return 0


def _suggest(arguments: argparse.Namespace) -> int:
    from pydantic_lenient.observe.outcomes import LogDirError, load_outcomes, rules_document, suggest

    try:
        suggestions = suggest(load_outcomes(arguments.log_dir), min_count=arguments.min_count)
    except LogDirError as error:
        raise CommandError(str(error)) from None
    if not suggestions:
        print(f"no suggestions: no pattern has {arguments.min_count} refusals yet", file=sys.stderr)
    for suggestion in suggestions:
        print(suggestion)
    if arguments.rules_out is not None:
        _write(json.dumps(rules_document(suggestions), indent=2, ensure_ascii=False) + "\n", arguments.rules_out)
    return 0


def _dashboard(arguments: argparse.Namespace) -> int:
    from pydantic_lenient.observe.dashboard import dashboard_data, make_server, render_html
    from pydantic_lenient.observe.outcomes import LogDirError

    try:
        if arguments.html is not None:
            _write(render_html(dashboard_data(arguments.log_dir, min_count=arguments.min_count)), arguments.html)
            return 0
        dashboard_data(arguments.log_dir)  # a bad directory is an error now, not a broken page later
    except LogDirError as error:
        raise CommandError(str(error)) from None
    try:
        server = make_server(arguments.log_dir, host=arguments.host, port=arguments.port, min_count=arguments.min_count)
    except OSError as error:
        raise CommandError(f"cannot listen on {arguments.host}:{arguments.port}: {error.strerror}") from None
    host, port = server.server_address[:2]
    print(f"dashboard for {arguments.log_dir} on http://{host!s}:{port}/ (Ctrl-C stops it)", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _min_count(text: str) -> int:
    if not re.fullmatch("[0-9]{1,9}", text) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return int(text)


def _port(text: str) -> int:
    if not re.fullmatch("[0-9]{1,5}", text) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, not {text!r}")
    return int(text)


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


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line naming the cause (exit 2), like every other failure."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _command(
    commands: Any, name: str, *, help: str, description: str, run: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    """Register a command: every command has a one-line help, a description and the exit codes."""
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help, description=description, epilog=EXIT_CODES)
    parser.set_defaults(run=run)
    return parser


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROGRAM, description="LLM tool inputs that survive wrong JSON types.", epilog=EXIT_CODES)
    parser.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    catalog = _command(
        commands,
        "catalog",
        help="print the MCP tools/list catalog of a module's tools",
        description="Print the tools/list catalog (JSON) of TARGET: module, module:attr, or file.py[:attr]. "
        "Without :attr, TOOLS (or tools) is used, else the module's one server object.",
        run=_catalog,
    )
    catalog.add_argument("target", metavar="TARGET")
    catalog.add_argument("--style", choices=STYLES, default="type-array", help="input schema style")
    catalog.add_argument(
        "--target",
        dest="schema_target",
        choices=TARGETS,
        default="mcp",
        help="where the schemas go: MCP hosts (2020-12 or draft-07), or a provider's function calling",
    )
    catalog.add_argument(
        "--check", action="store_true", help="audit for fields that are not lenient; exit 1 on an error"
    )
    catalog.add_argument("--output", metavar="FILE", help="write the catalog to FILE instead of stdout")

    normalize = _command(
        commands,
        "normalize",
        help="apply normalizer rules to one tool call",
        description="Print the normalized arguments of one call and the normalizations applied.",
        run=_normalize,
    )
    normalize.add_argument("--rules", metavar="RULES.json", help="rules file (a list, or {'rules': [...]})")
    normalize.add_argument("--tool", required=True, metavar="NAME", help="the tool being called")
    normalize.add_argument("arguments", metavar="ARGUMENTS_JSON", help="the call's arguments as JSON, or - for stdin")

    stats = _command(
        commands,
        "stats",
        help="print a normalizer stats file as tables",
        description="Print the counts in a normalizer stats file (Normalizer(stats_file=...) or "
        "normalizer.save(path) writes one) as tables: per tool, per rule, and the recent normalizations.",
        run=_stats,
    )
    stats.add_argument("file", metavar="STATS.json")

    repair = _command(
        commands,
        "repair",
        help="repair a call's arguments against a tool's inputSchema",
        description=(
            "Print the repaired arguments, the repairs and why they are still invalid, if they are."
            " Exit 0 when valid, 1 when still invalid, 2 for a schema that cannot be used or arguments"
            " that are not a JSON object."
        ),
        run=_repair,
    )
    repair.add_argument("--schema", required=True, metavar="SCHEMA.json", help="a JSON schema, or a tools/list catalog")
    repair.add_argument("--tool", metavar="NAME", help="the tool, when --schema is a catalog")
    repair.add_argument("arguments", metavar="ARGUMENTS_JSON", help="the arguments as JSON, or - for stdin")

    fix = _command(
        commands,
        "fix",
        help="rewrite the annotations the audit flags, in place",
        description="Make the tools' parameters and model fields in each file lenient, keeping formatting and "
        "comments, and import what that needs (the codemod extra: LibCST). --diff prints the change instead.",
        run=_fix,
    )
    fix.add_argument("paths", nargs="+", metavar="PATH", help="a Python file whose tools to fix")
    fix.add_argument("--diff", action="store_true", help="print the change as a unified diff; write nothing")

    proxy = _command(
        commands,
        "proxy",
        help="serve an MCP server over stdio with lenient tool inputs",
        description="Start COMMAND as the upstream MCP server (stdio) and serve it on stdio: tools/list schemas "
        "widened, tools/call arguments normalized and repaired, everything else passed through. Exits 1 when the "
        "upstream cannot start, exits or stops answering.",
        run=_proxy,
    )
    proxy.add_argument("--style", choices=STYLES, default="type-array", help="how widened schemas are written")
    proxy.add_argument("--rules", metavar="RULES.json", help="normalizer rules applied to each call first")
    proxy.add_argument(
        "--log-dir",
        metavar="DIR",
        help="record every call here (audit log, outcomes), with repair and normalizer stats",
    )
    proxy.add_argument(
        "--sample-chars",
        type=int,
        default=0,
        metavar="N",
        help="with --log-dir, keep N characters of each refused value (default: no value is kept)",
    )
    proxy.add_argument(
        "--ping-interval", type=float, default=30.0, metavar="SECONDS", help="ping a busy upstream this often"
    )
    proxy.add_argument(
        "--ping-timeout", type=float, default=30.0, metavar="SECONDS", help="an unanswered ping after this: hung"
    )
    proxy.add_argument("upstream", nargs="+", metavar="COMMAND", help="the upstream server's command, after --")
    suggest = _command(
        commands,
        "suggest",
        help="print the rules and annotation changes that recorded failures suggest",
        description="Print the normalizer rules and annotation changes that the error patterns saved in "
        "LOG_DIR (by a log_dir= on the MCP adapters, or an OutcomeRecorder) support, each with its evidence.",
        run=_suggest,
    )
    suggest.add_argument("log_dir", metavar="LOG_DIR")
    suggest.add_argument("--rules-out", metavar="FILE", help="also write the suggested rules as a rules file")
    suggest.add_argument("--min-count", type=_min_count, default=3, metavar="N", help="refusals needed (default 3)")

    dashboard = _command(
        commands,
        "dashboard",
        help="serve a web page over a log directory, or write it as one file",
        description="Serve the Normalizer and Error Patterns views of LOG_DIR on 127.0.0.1, read live, "
        "or write them as one self-contained file with --html.",
        run=_dashboard,
    )
    dashboard.add_argument("log_dir", metavar="LOG_DIR")
    dashboard.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    dashboard.add_argument("--port", type=_port, default=8765, help="port to listen on (default 8765; 0 picks one)")
    dashboard.add_argument("--html", metavar="FILE", help="write the page as one self-contained file and exit")
    dashboard.add_argument("--min-count", type=_min_count, default=3, metavar="N", help="refusals per suggestion")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return its exit code (0 ok, 1 a check or repair failed, 2 bad usage or input)."""
    parser = _parser()
    arguments = parser.parse_args(argv)
    try:
        code: int = arguments.run(arguments)
    except CommandError as error:
        print(f"{PROGRAM}: error: {_one_line(str(error))}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
