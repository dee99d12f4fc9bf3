"""The ``pydantic-lenient`` command line.

    pydantic-lenient catalog TARGET [--style STYLE] [--target mcp|...] [--check [--host HOST,...]] [--output FILE]
    pydantic-lenient normalize --rules RULES.json --tool NAME ARGUMENTS_JSON
    pydantic-lenient stats STATS.json
    pydantic-lenient repair --schema SCHEMA.json [--tool NAME] ARGUMENTS_JSON
    pydantic-lenient fix PATH... [--diff]
    pydantic-lenient proxy [--style STYLE] [--rules RULES.json] [--log-dir DIR [--sample-chars N]] -- COMMAND [ARGS...]
    pydantic-lenient proxy [OPTIONS] --url URL [--header NAME:VALUE ...]
    pydantic-lenient suggest LOG_DIR [--rules-out FILE] [--min-count N]
    pydantic-lenient dashboard LOG_DIR [--host HOST] [--port PORT] [--html FILE] [--min-count N]
    pydantic-lenient serve CONFIG.json [--host HOST] [--port PORT] [--workers N]

Also runs as ``python -m pydantic_lenient``. Exit codes: 0 ok, 1 a check or repair failed, 2 bad
usage or input. Every failure is one line on stderr naming its cause, never a traceback.

This module is the parser and the error handling; the commands themselves are in
`pydantic_lenient.cli.commands`, and what they share (reading JSON input, printing) in ``_io``.

To add a command: write ``_name(arguments) -> int`` in ``commands.py`` and register it here in
``_parser()`` with ``_command(commands, "name", help=..., description=..., run=_name)`` (both texts
are required, and a test checks every command has them). Raise ``CommandError("what is wrong")`` for
anything wrong with what the command was given (one line, exit 2); return 1 when a check or repair
fails, else 0.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from pydantic_lenient._version import __version__

from ._io import PROGRAM, CommandError, one_line
from .commands import _catalog, _dashboard, _fix, _normalize, _proxy, _repair, _stats, _suggest
from .serve import _serve

__all__ = ("main",)

EXIT_CODES = "exit codes: 0 ok, 1 a check or repair failed, 2 bad usage or input"

# `pydantic_lenient.schema.STYLES` and `TARGETS`, written out (a test holds them equal): importing
# those modules loads pydantic's JSON Schema generator, and the proxy starts its upstream before that.
STYLES = ("portable", "type-array", "any-of", "strict")
TARGETS = ("mcp", "mcp-draft-07", "openai", "anthropic", "gemini")


def _min_count(text: str) -> int:
    if not re.fullmatch("[0-9]{1,9}", text) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return int(text)


def _seconds(text: str) -> float:
    if not re.fullmatch("[0-9]{1,6}([.][0-9]{1,6})?", text) or float(text) <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {text!r}")
    return float(text)


def _port(text: str) -> int:
    if not re.fullmatch("[0-9]{1,5}", text) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, not {text!r}")
    return int(text)


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
        help="print the MCP tools/list catalog of a module's tools (runs the module's code)",
        description="Print the tools/list catalog (JSON) of TARGET: module, module:attr, or file.py[:attr]. "
        "Without :attr, TOOLS (or tools) is used, else the module's one server object. TARGET is imported, "
        "so its code runs as the current user, in a child process: a target that exits or is interrupted "
        "while importing is an error, never an empty success.",
        run=_catalog,
    )
    catalog.add_argument("target", metavar="TARGET")
    catalog.add_argument(
        "--style",
        choices=STYLES,
        help="input schema style (default portable); a server's tools are listed as the server lists them,"
        " and a style it does not list them in is an error",
    )
    catalog.add_argument(
        "--target",
        dest="schema_target",
        choices=TARGETS,
        default="mcp",
        help="where the schemas go: MCP hosts (2020-12 or draft-07), or a provider's function calling",
    )
    catalog.add_argument(
        "--check",
        action="store_true",
        help="audit for fields that are not lenient or advertise a bound hosts cannot check;"
        " exit 1 on an error, or when no tools are found",
    )
    catalog.add_argument(
        "--host",
        metavar="HOST,...",
        help="with --check, also check each tool on these hosts (their profiles, or all): each shape a host"
        " refuses or corrupts, and the fix; exit 1 on any",
    )
    catalog.add_argument("--output", metavar="FILE", help="write the catalog to FILE instead of stdout")
    catalog.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="end the import, and every process it started, after this (default 120)",
    )

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
    fix.add_argument(
        "--follow-symlinks", action="store_true", help="fix the file a symlink points to (refused by default)"
    )

    proxy = _command(
        commands,
        "proxy",
        help="serve an MCP server over stdio with lenient tool inputs",
        description="Start COMMAND as the upstream MCP server (stdio), or reach the remote server at --url "
        "(Streamable HTTP), and serve it on stdio: tools/list schemas widened, tools/call arguments normalized and "
        "repaired, everything else passed through. Exits 2 when the upstream cannot start or be reached, 1 when it "
        "exits or stops answering.",
        run=_proxy,
    )
    proxy.add_argument("--style", choices=STYLES, default=STYLES[0], help="how widened schemas are written")
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
    proxy.add_argument(
        "--url", metavar="URL", help="a remote MCP server's Streamable HTTP endpoint, instead of COMMAND"
    )
    proxy.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="with --url, an HTTP header sent with every request (repeatable; values are never logged)",
    )
    proxy.add_argument("upstream", nargs="*", metavar="COMMAND", help="the upstream server's command, after --")
    serve = _command(
        commands,
        "serve",
        help="serve the MCP servers of a config file over Streamable HTTP, with lenient tool inputs",
        description="The gateway: every server in CONFIG.json's mcpServers (command/args/env or url/headers) at "
        "/servers/NAME/mcp, and all of them at /mcp, in both MCP eras, each tools/list widened and each tools/call "
        "repaired as the proxy does. Binds loopback unless the config names a token or OAuth.",
        run=_serve,
    )
    serve.add_argument("config", metavar="CONFIG.json", help="the mcpServers document, with a gateway section")
    serve.add_argument("--host", help="the address to bind (default: the config's, else 127.0.0.1)")
    serve.add_argument("--port", type=_port, help="the port to bind (0: any free one; default: the config's)")
    serve.add_argument("--workers", type=int, default=1, metavar="N", help="uvicorn worker processes (default 1)")
    serve.add_argument(
        "--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug"), help="uvicorn's"
    )
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
        print(f"{PROGRAM}: error: {one_line(str(error))}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
