"""The child process `pydantic-lenient catalog` imports its target in.

Importing a target runs its code. In a child, whatever that code does to the process (``os._exit``,
``sys.exit``, a ``KeyboardInterrupt``, a thread that never ends) cannot end the command itself with
a success: the parent reads the one result document this child writes only once the tools were
loaded and their catalog built, and a child that ends without writing it is an error.

    python -m pydantic_lenient.cli._catalog_child REQUEST.json RESULT.json

``REQUEST.json`` holds the target, style, schema target, whether to audit and the hosts to check
the tools on; ``RESULT.json`` gets either ``{"error": ...}`` or the catalog, the ``lost:`` lines,
the audit's findings and the hosts' (`pydantic_lenient.hosts.check`).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

__all__ = ("catalog_result",)


def catalog_result(request: dict[str, Any]) -> dict[str, Any]:
    """Load ``request["target"]`` and build what `pydantic-lenient catalog` prints for it."""
    from pydantic_lenient.schema.audit import audit, format_findings
    from pydantic_lenient.schema.catalog import tool_catalog, tool_specs
    from pydantic_lenient.schema.loading import TargetError, load_target
    from pydantic_lenient.schema.targets import Loss, target_schema, to_target

    target, style, schema_target = request["target"], request["style"], request["schema_target"]
    try:
        tools = load_target(target)
    except TargetError as error:
        return {"error": str(error)}
    try:
        catalog = tool_catalog(tools, style=style, target=schema_target)
        losses: list[str] = []
        for spec in tool_specs(tools) if schema_target != "mcp" else []:
            # A server's tool: what the target gave up of the schema the server lists.
            lost: tuple[Loss, ...] = (
                target_schema(spec.input_model, schema_target, style=style).losses
                if spec.advertised is None
                else to_target(spec.advertised, schema_target).losses
            )
            losses.extend(f"lost: {spec.name}{loss.location}: {loss.what}" for loss in lost)
        findings = audit(tools) if request["check"] else []
        on_hosts = _host_findings(tools, style, request.get("hosts") or [])
    except Exception as error:  # a tool whose model or schema cannot be built
        return {"error": f"{target}: {type(error).__name__}: {error}"}
    return {
        "catalog": catalog,
        "losses": losses,
        "findings": format_findings(findings) if request["check"] else "",
        "host_findings": on_hosts,
        "failed": any(finding.level == "error" for finding in findings) or bool(on_hosts),
    }


def _host_findings(tools: Any, style: str | None, hosts: list[str]) -> list[str]:
    """What each named host refuses or corrupts of each tool as the catalog lists it."""
    if not hosts:
        return []
    from pydantic_lenient.hosts import profile
    from pydantic_lenient.hosts.tools import check_on_hosts

    checks = check_on_hosts(tools, [profile(name) for name in hosts], style=style)  # type: ignore[arg-type]
    return [line for check in checks for line in check.findings]


def _main(request_path: str, result_path: str) -> None:
    with open(request_path, encoding="utf-8") as file:
        request = json.load(file)
    try:
        result = catalog_result(request)
    except BaseException as error:  # the target's code may raise anything, KeyboardInterrupt too
        result = {"error": f"{request['target']}: the import was interrupted: {type(error).__name__}: {error}"}
    text = json.dumps(result, ensure_ascii=True)
    with open(result_path, "w", encoding="utf-8") as file:
        file.write(text)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # not waiting for threads or exit handlers the target left behind


if __name__ == "__main__":  # pragma: no cover - run as the child
    _main(sys.argv[1], sys.argv[2])
