"""Every target through Ajv 8: its default options, ``strict: true``, and the MCP TypeScript SDK's.

The MCP TypeScript SDK validates with Ajv's draft-07 class and
``{strict: false, validateFormats: true, validateSchema: false, allErrors: true}`` (its
``AjvJsonSchemaValidator``; it adds ajv-formats, which none of these schemas needs: they have no
``format``). Each target compiles where the README says it does, and the host's verdicts agree with
the model's, within the listed exceptions and the losses the target reports.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from pydantic_lenient import TARGETS, Target, input_schema, target_schema
from pydantic_lenient.schema.targets import TargetSchema, default_style_for
from tests.conftest import AjvRunner
from tests.contract import (
    FIXED_VALUES,
    JSON_CORPUS,
    SCALAR_TYPES,
    agrees,
    is_nested_portable_exception,
    server_verdict,
    tool_model,
)
from tests.cross_cutting.test_ajv import CORPUS
from tests.losses import explained
from tests.types_.test_json_values import JSON_FIELDS, Tool

# The hostile values, and a tenth of the seeded sample: 570 compiled schemas check each of them.
VALUES = FIXED_VALUES + CORPUS[len(FIXED_VALUES) :: 10]
MCP_TYPESCRIPT_SDK = {"strict": False, "validateFormats": True, "validateSchema": False, "allErrors": True}
# (name, Ajv class, options): Ajv's class for the target's draft with its defaults, and strict: true;
# the MCP TypeScript SDK always uses the draft-07 class.
SETUPS: list[tuple[str, str | None, dict[str, Any]]] = [
    ("default", None, {}),
    ("strict", None, {"strict": True}),
    ("mcp-typescript-sdk", "07", MCP_TYPESCRIPT_SDK),
]


def _draft(target: Target, forced: str | None) -> str:
    return forced or ("07" if target == "mcp-draft-07" else "2020-12")


def test_every_target_compiles_and_agrees_on_scalars(ajv: AjvRunner) -> None:
    combinations = [
        (name, optional, target, setup)
        for name, optional, target, setup in itertools.product(SCALAR_TYPES, (False, True), TARGETS, SETUPS)
    ]
    results: dict[tuple[str, bool, Target], TargetSchema] = {
        (name, optional, target): target_schema(tool_model(SCALAR_TYPES[name][0], optional=optional), target)
        for name, optional, target, _ in combinations
    }
    arguments = [{"value": value} for value in VALUES]
    verdicts = ajv(
        [
            {
                "schema": results[name, optional, target].schema,
                "values": arguments,
                "draft": _draft(target, forced),
                "options": options,
            }
            for name, optional, target, (_, forced, options) in combinations
        ]
    )
    problems = []
    for (name, optional, target, (setup, _, _)), verdict in zip(combinations, verdicts, strict=True):
        assert verdict["compile_error"] is None, (name, target, setup, verdict["compile_error"])
        model = tool_model(SCALAR_TYPES[name][0], optional=optional)
        result = results[name, optional, target]
        for value, host_accepts in zip(VALUES, verdict["verdicts"], strict=True):
            server = server_verdict(model, {"value": value})
            if agrees(host_accepts, value, server, portable=default_style_for(target) == "portable"):
                continue
            if not (host_accepts and explained(result, "value")):
                problems.append((name, optional, target, setup, value, host_accepts, server.errors))
    assert not problems, problems[:10]


CONTRACT_FIELDS = [field for field in JSON_FIELDS if field != "tags"]  # pydantic's own set mismatch


@pytest.mark.parametrize("setup", SETUPS, ids=[setup[0] for setup in SETUPS])
def test_every_target_agrees_on_json_shaped_fields(
    ajv: AjvRunner, setup: tuple[str, str | None, dict[str, Any]]
) -> None:
    name, forced, options = setup
    # The 2020-12 MCP target is for 2020-12 hosts: under draft-07 a tuple leaks (pinned below).
    targets = [target for target in TARGETS if not (forced == "07" and target == "mcp")]
    results = {target: target_schema(Tool, target) for target in targets}
    rows = [(target, field) for target in targets for field in CONTRACT_FIELDS]
    base = dict.fromkeys(Tool.model_fields)
    verdicts = ajv(
        [
            {
                "schema": results[target].schema,
                "values": [{**base, field: value} for value in JSON_CORPUS],
                "draft": _draft(target, forced),
                "options": options,
            }
            for target, field in rows
        ]
    )
    problems = []
    for (target, field), verdict in zip(rows, verdicts, strict=True):
        assert verdict["compile_error"] is None, (target, name, verdict["compile_error"])
        for value, host_accepts in zip(JSON_CORPUS, verdict["verdicts"], strict=True):
            server = server_verdict(Tool, {**base, field: value})
            if server.accepted == host_accepts or (host_accepts and isinstance(value, str)):
                continue  # agreement, or the listed exception (hosts do not check a string's JSON)
            if host_accepts and default_style_for(target) == "portable" and is_nested_portable_exception(server):
                continue
            if not explained(results[target], field):
                problems.append((target, field, name, value, host_accepts))
    assert not problems, problems[:10]


def test_draft_07_hosts_let_a_2020_12_tuple_through_and_the_draft_07_target_does_not(ajv: AjvRunner) -> None:
    from tests.schema.test_targets import Pair

    bad, good = {"pair": ["x", 5]}, {"pair": [5, "x"]}
    mcp, draft_07 = input_schema(Pair), input_schema(Pair, target="mcp-draft-07")
    leaked, held, strict_07 = ajv(
        [
            {"schema": mcp, "values": [bad, good], "draft": "07", "options": MCP_TYPESCRIPT_SDK},
            {"schema": draft_07, "values": [bad, good], "draft": "07", "options": MCP_TYPESCRIPT_SDK},
            {"schema": mcp, "values": [], "draft": "07", "options": {}},
        ]
    )
    assert leaked["verdicts"] == [True, True]
    assert held["verdicts"] == [False, True]
    assert "prefixItems" in (strict_07["compile_error"] or "")


def test_zod_refuses_integers_above_2_53_and_takes_their_digit_strings(ajv: AjvRunner) -> None:
    """zod's fromJSONSchema (hosts that turn a tool schema into zod) refuses integers beyond 2**53
    that LenientU64 accepts, as it does for any JSON Schema integer; the string form still passes."""
    from pydantic_lenient import LenientU64

    model = tool_model(LenientU64, optional=False)
    values: list[dict[str, Any]] = [{"value": 2**60}, {"value": str(2**60)}, {"value": 2**53 - 1}, {"value": "abc"}]
    assert [server_verdict(model, value).accepted for value in values] == [True, True, True, False]
    results = ajv(
        [
            {
                "schema": target_schema(model, target).schema,
                "values": values,
                "draft": "2020-12",
                "options": {},
                "validator": "zod",
            }
            for target in TARGETS
        ]
    )
    for target, result in zip(TARGETS, results, strict=True):
        assert result["compile_error"] is None, (target, result["compile_error"])
        pattern_kept = target != "anthropic"  # anthropic moves the pattern into the description (a loss)
        # The portable style (the MCP targets' default) says "number" inside anyOf, which zod does not bound.
        number_branch = default_style_for(target) == "portable"
        assert result["verdicts"] == [number_branch, True, True, not pattern_kept], target
