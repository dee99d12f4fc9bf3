"""The commands: one ``_name(arguments) -> int`` handler per command, over the subsystems.

Each handler takes the parsed arguments (`pydantic_lenient.cli.main` registers it), raises
`CommandError` for anything wrong with what it was given, and returns 1 when a check or repair
fails, else 0. Each subsystem is imported inside the handler that uses it: a command loads only
what it needs, and a missing optional extra fails only its own command.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ._io import (
    PROGRAM,
    CommandError,
    check_printable,
    json_text,
    one_line,
    print_json,
    read_arguments,
    read_json_file,
    write,
)

__all__ = ("format_stats",)


def _catalog(arguments: argparse.Namespace) -> int:
    hosts = _host_names(arguments.host, arguments.check, arguments.schema_target)
    result = _catalog_in_child(
        arguments.target, arguments.style, arguments.schema_target, arguments.check, hosts, arguments.timeout
    )
    if "error" in result:
        raise CommandError(result["error"])
    write(json_text(result["catalog"]), arguments.output)
    for line in result["losses"]:
        print(line, file=sys.stderr)
    if not arguments.check:
        return 0
    if not result["catalog"].get("tools"):
        print(
            f"{PROGRAM}: {arguments.target}: no tools found, so there is nothing the check could pass", file=sys.stderr
        )
        return 1
    print(result["findings"], file=sys.stderr)
    if hosts:
        for line in result["host_findings"]:
            print(line, file=sys.stderr)
        count = len(result["host_findings"])
        print(f"{count} finding(s) on {', '.join(hosts)}", file=sys.stderr)
    return 1 if result["failed"] else 0


def _host_names(option: str | None, check: bool, schema_target: str) -> list[str]:
    """The profiles ``--host`` names (``all`` for every one), each once, in order."""
    if option is None:
        return []
    if not check:
        raise CommandError("--host checks the tools on hosts: give --check with it")
    if schema_target != "mcp":
        raise CommandError("--host checks what MCP hosts list: leave out --target (or give --target mcp)")
    from pydantic_lenient.hosts import PROFILES

    names = [name.strip() for name in option.split(",") if name.strip()]
    if "all" in names:
        return list(PROFILES)
    unknown = [name for name in names if name not in PROFILES]
    if unknown or not names:
        named = ", ".join(map(repr, unknown)) or "(none)"
        raise CommandError(f"--host: unknown host {named}; known: all, {', '.join(PROFILES)}")
    return list(dict.fromkeys(names))


def _catalog_in_child(
    target: str, style: str | None, schema_target: str, check: bool, hosts: list[str], timeout: float | None
) -> dict[str, Any]:
    """What `_catalog_child` builds for ``target``, imported in a child process, so that nothing the
    target's code does (``os._exit(0)``, a daemon that keeps running) can pass for a catalog or keep
    the command from returning. The child's own output (the target's prints) goes to stderr."""
    from pydantic_lenient.schema.loading import IMPORT_TIMEOUT, run_isolated

    request = {"target": target, "style": style, "schema_target": schema_target, "check": check, "hosts": hosts}
    with tempfile.TemporaryDirectory(prefix="pydantic-lenient-catalog-") as directory:
        request_path, result_path = Path(directory, "request.json"), Path(directory, "result.json")
        request_path.write_text(json.dumps(request), encoding="utf-8")
        child = run_isolated(
            "pydantic_lenient.cli._catalog_child", [str(request_path), str(result_path)], timeout=timeout
        )
        if child.output:
            sys.stderr.write(child.output.decode("utf-8", "backslashreplace"))
        try:
            result: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            result = {}
    if not ("error" in result or "catalog" in result):
        if child.returncode is None:
            seconds = IMPORT_TIMEOUT if timeout is None else timeout
            return {"error": f"{target}: the import did not complete within {seconds:g} s (see --timeout)"}
        ending = f"exit code {child.returncode}" if child.returncode >= 0 else f"signal {-child.returncode}"
        return {"error": f"{target}: the import did not complete: the target's code ended the process ({ending})"}
    return result


def _normalize(arguments: argparse.Namespace) -> int:
    from pydantic_lenient.normalizer.engine import NormalizationConflict, Normalizer, RuleError

    try:
        normalizer = Normalizer.from_file(arguments.rules) if arguments.rules else Normalizer()
    except RuleError as error:
        raise CommandError(str(error)) from None
    call = read_arguments(arguments.arguments)
    check_printable(call, "ARGUMENTS")
    try:
        result = normalizer.apply(arguments.tool, call)
    except NormalizationConflict as error:
        raise CommandError(str(error)) from None
    print_json({"arguments": result.arguments, "applied": result.applied})
    return 0


def _stats(arguments: argparse.Namespace) -> int:
    from pydantic_lenient.normalizer.stats import StatsFileError, load_stats

    try:
        stats = load_stats(arguments.file)
    except StatsFileError as error:
        raise CommandError(str(error)) from None
    text = format_stats(dict(stats)) + "\n"
    # A name in the file may hold a lone surrogate (JSON can escape one): show it escaped.
    write(text.encode("utf-8", "backslashreplace").decode("utf-8"), None)
    return 0


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


def _repair(arguments: argparse.Namespace) -> int:
    """Exit 0 when the repaired arguments are valid, 1 when they are still invalid (with the
    reasons on stderr), 2 for bad input: a schema the validator cannot use, arguments that are not
    a JSON object."""
    schema = _schema_for(read_json_file(arguments.schema), arguments.tool, arguments.schema)
    call = read_arguments(arguments.arguments)
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
    write(json_text(output), None)
    sys.stdout.flush()  # the summary line follows the output, also where both go to one pipe
    if result.valid:
        print(f"{PROGRAM}: valid after {len(result.repairs)} repair(s)", file=sys.stderr)
        return 0
    reasons = "; ".join(f"{reason['path'] or '/'}: {one_line(reason['message'])}" for reason in result.reasons)
    print(f"{PROGRAM}: still invalid after {len(result.repairs)} repair(s): {reasons}", file=sys.stderr)
    return 1


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
        from pydantic_lenient.codemod.fix import FixError, fix_file
        from pydantic_lenient.schema.loading import TargetError
    except ImportError as error:
        raise CommandError(
            f"fix needs LibCST: pip install 'pydantic-lenient[codemod]'"
            f" (in a clone: pip install -e '.[codemod]') ({error})"
        ) from None
    for path in arguments.paths:
        if not Path(path).is_file():
            raise CommandError(f"no such file: {path}")
        try:
            result = fix_file(path, write=not arguments.diff, follow_symlinks=arguments.follow_symlinks)
        except (TargetError, FixError) as error:
            raise CommandError(str(error)) from None
        except Exception as error:  # a file that does not parse, or whose tools cannot be read
            raise CommandError(f"{path}: {type(error).__name__}: {error}") from None
        for name in result.skipped:
            print(f"{path}: {name}: left alone, its definition cannot be told apart in the source", file=sys.stderr)
        for kept in result.kept:
            print(f"{path}: {kept}", file=sys.stderr)
        if arguments.diff:
            sys.stdout.write(result.diff())
            continue
        for change in result.changes:
            print(change, file=sys.stderr)
        print(f"{path}: {len(result.changes)} annotation(s) made lenient", file=sys.stderr)
    return 0


def _proxy(arguments: argparse.Namespace) -> int:
    # Only what the options ask for loads before the upstream starts (`serve` starts it first).
    from pydantic_lenient.observe.logdir import LogDirError  # the standard library only

    normalizer = None
    try:
        from pydantic_lenient.proxy.core import ProxyOptions
        from pydantic_lenient.proxy.stdio import run_proxy
        from pydantic_lenient.proxy.transports import UpstreamSpec, http_upstream

        if arguments.url is not None:
            http_upstream()  # its missing extra is one line before anything starts
        if arguments.rules:
            from pydantic_lenient.normalizer.engine import Normalizer, RuleError

            try:
                normalizer = Normalizer.from_file(arguments.rules)
            except RuleError as error:
                raise CommandError(str(error)) from None
    except ImportError as error:
        raise CommandError(str(error)) from None
    for name in ("ping_interval", "ping_timeout"):
        if not getattr(arguments, name) > 0:
            raise CommandError(f"--{name.replace('_', '-')} must be a positive number of seconds")
    if arguments.sample_chars < 0 or (arguments.sample_chars and arguments.log_dir is None):
        raise CommandError("--sample-chars needs --log-dir and a number of characters, 0 or more")
    if bool(arguments.upstream) == (arguments.url is not None):
        raise CommandError("give the upstream as a COMMAND after --, or as --url URL, not both")
    if arguments.header and arguments.url is None:
        raise CommandError("--header needs --url")
    headers = []
    for header in arguments.header:
        name, colon, value = header.partition(":")
        if not colon or not name.strip() or any(c in header for c in "\r\n"):
            raise CommandError("--header takes NAME:VALUE, with a name and no line breaks")  # never echo the value
        headers.append((name.strip(), value.strip()))
    try:  # a URL or a header value a request cannot carry: one line, never the value
        upstream = UpstreamSpec(arguments.upstream, url=arguments.url, headers=headers)
    except ValueError as error:
        raise CommandError(f"--url/--header: {error}") from None
    setup = _telemetry()
    try:
        options = ProxyOptions(
            style=arguments.style,
            normalizer=normalizer,
            log_dir=arguments.log_dir,
            sample_chars=arguments.sample_chars,
            ping_interval=arguments.ping_interval,
            ping_timeout=arguments.ping_timeout,
            telemetry=setup.telemetry if setup is not None else None,
        )
        return run_proxy(upstream, options)
    except LogDirError as error:  # a corrupt outcomes file (the upstream is stopped again)
        raise CommandError(str(error)) from None
    finally:
        if setup is not None:
            setup.shutdown()


def _telemetry() -> Any:
    """Spans and metrics as the standard ``OTEL_*`` variables ask, or None (they ask for none)."""
    from pydantic_lenient.observe.otel_setup import TelemetryConfigError, telemetry_from_environment

    try:
        return telemetry_from_environment()
    except TelemetryConfigError as error:
        raise CommandError(str(error)) from None


def _suggest(arguments: argparse.Namespace) -> int:
    from pydantic_lenient.observe.fleet import fleet_outcomes
    from pydantic_lenient.observe.logdir import LogDirError
    from pydantic_lenient.observe.suggestions import client_lines, rules_document, suggest

    try:
        stats = fleet_outcomes(arguments.log_dir)
        suggestions = suggest(stats, min_count=arguments.min_count)
    except LogDirError as error:
        raise CommandError(str(error)) from None
    if not suggestions:
        print(f"no suggestions: no pattern has {arguments.min_count} refusals yet", file=sys.stderr)
    for suggestion in suggestions:
        print(suggestion)
    clients = client_lines(stats)
    if clients:
        print("by client:")
        for line in clients:
            print(f"  {line}")
    if arguments.rules_out is not None:
        write(json.dumps(rules_document(suggestions), indent=2, ensure_ascii=False) + "\n", arguments.rules_out)
    return 0


def _dashboard(arguments: argparse.Namespace) -> int:
    from pydantic_lenient.observe.dashboard import dashboard_data, make_server, render_html
    from pydantic_lenient.observe.logdir import LogDirError

    try:
        if arguments.html is not None:
            write(render_html(dashboard_data(arguments.log_dir, min_count=arguments.min_count)), arguments.html)
            return 0
        dashboard_data(arguments.log_dir)  # a bad directory is an error now, not a broken page later
    except LogDirError as error:
        raise CommandError(str(error)) from None
    try:
        server = make_server(arguments.log_dir, host=arguments.host, port=arguments.port, min_count=arguments.min_count)
    except OSError as error:
        raise CommandError(f"cannot listen on {arguments.host}:{arguments.port}: {error.strerror}") from None
    print(f"dashboard for {arguments.log_dir} on {server.url} (Ctrl-C stops it)", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
