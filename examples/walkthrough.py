"""Converting an existing server, step by step: ``python3 examples/walkthrough.py``.

Starts from ``examples/legacy_tools.py`` (plain ``int``, ``bool`` and ``list[int]`` parameters) and
makes it survive the calls models really send, one step at a time:

0. Before: the audit's findings, and what a host that checks the advertised schema does with
   ``"limit": "100"``.
1. No edit at all: `lenient_tool` on each function (or ``make_lenient(server,
   lenient_parameters=True)`` for an official-SDK server). The audit passes; ``"100"`` is taken.
2. The same, written in the source: ``pydantic-lenient fix`` rewrites the annotations (LibCST,
   the ``codemod`` extra); the fixed file passes the audit on its own.
3. Wrong names too: a `Normalizer` with ``examples/mail_rules.json`` turns ``count`` into ``limit``.
4. Keep it so: ``assert_passes_audit`` in a test, and the catalog committed for review.

Each step checks what it claims; the script exits 1 if one does not hold. A step whose extra is not
installed says so and is skipped.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import legacy_tools  # noqa: E402

from pydantic_lenient import Normalizer, audit, lenient_tool, tool_catalog, tool_specs  # noqa: E402
from pydantic_lenient.testing import assert_passes_audit, host_validator  # noqa: E402

MANGLED = {"folder": "Dev", "limit": "100"}
LEGACY: list[Callable[..., Any]] = [legacy_tools.search, legacy_tools.fetch_message, legacy_tools.move_messages]
failures: list[str] = []


def check(claim: str, holds: bool) -> None:
    print(f"   {'ok  ' if holds else 'FAIL'} {claim}")
    if not holds:
        failures.append(claim)


def host_accepts(tools: Any, tool: str, arguments: dict[str, Any]) -> bool:
    """What a validating host (Ajv-like) decides from the advertised inputSchema alone."""
    schema = next(entry["inputSchema"] for entry in tool_catalog(tools)["tools"] if entry["name"] == tool)
    return bool(host_validator(schema).is_valid(arguments))


def server_takes(tools: Any, tool: str, arguments: dict[str, Any]) -> Any:
    """The validated arguments, or the first error message."""
    model = next(spec.input_model for spec in tool_specs(tools) if spec.name == tool)
    try:
        return model.model_validate(arguments).model_dump()
    except ValidationError as error:
        return error.errors(include_url=False)[0]["msg"]


def step_0_before() -> None:
    print("0. Before: examples/legacy_tools.py as it is")
    findings = audit(LEGACY)
    check(f"the audit finds {sum(f.level == 'error' for f in findings)} fields to change", len(findings) == 7)
    check("a validating host refuses search(limit='100')", not host_accepts(legacy_tools.TOOLS, "search", MANGLED))


def step_1_no_edit() -> None:
    print("1. No edit: TOOLS = [lenient_tool(tool) for tool in legacy_tools.TOOLS]")
    tools = [lenient_tool(tool) for tool in LEGACY]  # the one line a server needs
    check("the audit finds nothing", audit(tools) == [])
    check("a validating host lets search(limit='100') through", host_accepts(tools, "search", MANGLED))
    check("the server gets limit=100", server_takes(tools, "search", MANGLED)["limit"] == 100)
    moved = server_takes(tools, "move_messages", {"uids": "[17, 18]", "destination": "Done", "dry_run": "false"})
    check("move_messages gets uids=[17, 18] and dry_run=False", moved["uids"] == [17, 18] and not moved["dry_run"])
    refused = server_takes(tools, "move_messages", {"uids": [17], "destination": "Done", "dry_run": "yes"})
    check(f"dry_run='yes' is refused: {refused}", isinstance(refused, str) and "'true' or 'false'" in refused)


def step_2_fix_the_source() -> None:
    print("2. In the source: pydantic-lenient fix examples/legacy_tools.py")
    if importlib.util.find_spec("libcst") is None:
        print("   skipped: needs the codemod extra (LibCST)")
        return
    from pydantic_lenient.codemod import fix_file
    from pydantic_lenient.schema import load_target

    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder, "legacy_tools.py")
        copy.write_text((HERE / "legacy_tools.py").read_text(encoding="utf-8"), encoding="utf-8")
        result = fix_file(copy)
        changed = [line for line in result.diff().splitlines() if line[:1] in "+-" and line[:3] not in ("---", "+++")]
        print("\n".join(f"   | {line}" for line in changed))
        check(f"{len(result.changes)} annotations rewritten", len(result.changes) == 6)
        check("the fixed file passes the audit", audit(load_target(str(copy))) == [])


def step_3_wrong_names() -> None:
    print("3. Wrong names: Normalizer.from_file('examples/mail_rules.json') before validation")
    normalizer = Normalizer.from_file(HERE / "mail_rules.json")
    tools = [lenient_tool(tool) for tool in LEGACY]
    arguments = normalizer.apply("search", {"folder": "Dev", "count": "5"}).arguments
    check(f"search(count='5') becomes {arguments}", server_takes(tools, "search", arguments)["limit"] == 5)


def step_4_keep_it_so() -> None:
    print("4. Keep it so: assert_passes_audit(TOOLS) in a test; the catalog committed for review")
    check("it passes for the lenient tools", not fails(assert_passes_audit, [lenient_tool(tool) for tool in LEGACY]))
    check("it fails for the legacy tools", fails(assert_passes_audit, LEGACY))


def fails(assertion: Callable[[Any], None], tools: Any) -> bool:
    try:
        assertion(tools)
    except AssertionError:
        return True
    return False


STEPS: list[Callable[[], None]] = [
    step_0_before,
    step_1_no_edit,
    step_2_fix_the_source,
    step_3_wrong_names,
    step_4_keep_it_so,
]


def main() -> int:
    for step in STEPS:
        step()
    print(f"\n{'all steps hold' if not failures else f'{len(failures)} claim(s) do not hold'}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
