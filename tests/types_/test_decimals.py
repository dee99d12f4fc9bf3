"""LenientDecimal: numeric strings in JSON number grammar and JSON numbers become an exact ``Decimal``,
through every way in (issue 32: the proof that the lenient type family is declared once).

The scalar contract (host and server agree on every value) holds it through `tests/contract.py`'s
``SCALAR_TYPES``; here: exactness, bounds, the documented digit-limit exception, and the ways in.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Optional

import annotated_types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from pydantic_lenient import (
    Lenient,
    LenientDecimal,
    input_schema,
    lenient_annotation,
    lenient_model,
    lenient_tool,
    render_annotation,
    rules_from_model,
    tool_catalog,
)
from pydantic_lenient.cli.main import main
from pydantic_lenient.codemod.fix import fix_file
from pydantic_lenient.repair import Repairer
from pydantic_lenient.schema.audit import audit
from pydantic_lenient.schema.catalog import model_from_function
from pydantic_lenient.schema.loading import load_target
from pydantic_lenient.testing import host_validator
from pydantic_lenient.types.family import scalar_marker_class
from pydantic_lenient.types.portable_rules import Rendering, rendering
from tests.imported import import_file
from tests.sdks import require

ADAPTER = TypeAdapter(LenientDecimal)

ACCEPTED = [
    ("100.5", Decimal("100.5")),
    ("0.1", Decimal("0.1")),
    ("-0", Decimal("-0")),
    ("2e3", Decimal("2E+3")),
    ("1E-7", Decimal("1E-7")),
    ("0.1000000000000000000000000001", Decimal("0.1000000000000000000000000001")),  # past a double: exact
    (7, Decimal(7)),
    (2**70, Decimal(2**70)),
    (1.5, Decimal("1.5")),
    (0.1, Decimal("0.1")),  # a float by its shortest text, as pydantic-core reads it
    (Decimal("3.25"), Decimal("3.25")),
]

REFUSED: list[Any] = [True, False, None, "", " 1", "1 ", "+1", "1_000", "01", "1.", ".5", "0x1f", "NaN", "nan"]
REFUSED += ["Infinity", "-Infinity", "\u0663", "\uff11", "1e9999999999999999999", Decimal("NaN"), Decimal("Infinity")]
REFUSED += [float("nan"), float("inf"), "abc", [], {}, "null"]


@pytest.mark.parametrize(("value", "expected"), ACCEPTED, ids=repr)
def test_numbers_and_number_text_become_the_exact_decimal(value: Any, expected: Decimal) -> None:
    for strict in (None, True, False):
        result = ADAPTER.validate_python(value, strict=strict)
        assert type(result) is Decimal
        assert str(result) == str(expected)


@pytest.mark.parametrize("value", REFUSED, ids=repr)
def test_everything_else_is_refused_with_one_error(value: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        ADAPTER.validate_python(value)
    assert [error["type"] for error in caught.value.errors()] == ["lenient_decimal"]


@given(st.decimals(allow_nan=False, allow_infinity=False))
def test_every_finite_decimal_text_comes_back_exactly(value: Decimal) -> None:
    text = str(value)
    assert str(ADAPTER.validate_python(text)) == text
    assert str(ADAPTER.validate_json(json.dumps(text))) == text


@given(st.text(alphabet="0123456789-+.eE _\u0663", max_size=12))
def test_a_string_is_taken_exactly_when_the_host_admits_it(text: str) -> None:
    """The pattern the host checks is the one the validator checks (no exponent overflow here)."""
    host = host_validator(input_schema(lenient_model(_Pay)))
    try:
        ADAPTER.validate_python(text)
        server = True
    except ValidationError:
        server = False
    assert host.is_valid({"amount": text}) == server


def test_advertised_as_a_number_or_number_text_and_written_as_text() -> None:
    with rendering(Rendering.RESTYLED):  # the marker's fragment, canonical first
        schema = ADAPTER.json_schema()
    assert schema["anyOf"][0] == {"type": "number"}
    assert schema["anyOf"][1]["type"] == "string"
    # Under pydantic's own generator, the number's text comes first (VS Code's Ajv coerces in order).
    assert [branch["type"] for branch in ADAPTER.json_schema()["anyOf"]] == ["string", "number"]
    assert ADAPTER.json_schema(mode="serialization") == {"type": "string"}
    assert ADAPTER.dump_json(Decimal("0.10")) == b'"0.10"'  # as pydantic writes a Decimal: nothing rounded


@pytest.mark.parametrize(
    ("annotation", "bounds"),
    [
        pytest.param(
            Annotated[LenientDecimal, Field(ge=0, lt=Decimal("9.5"))], {"minimum": 0, "exclusiveMaximum": 9.5}
        ),
        pytest.param(
            Lenient[Annotated[Decimal, Field(gt=Decimal("0.1"), le=2)]], {"exclusiveMinimum": 0.1, "maximum": 2}
        ),
        pytest.param(Lenient[Annotated[Decimal, Field(multiple_of=Decimal("5"))]], {"multipleOf": 5}),
    ],
)
def test_bounds_are_advertised_as_json_numbers_and_checked_exactly(annotation: Any, bounds: dict[str, Any]) -> None:
    with rendering(Rendering.RESTYLED):
        schema = TypeAdapter(annotation).json_schema()
    assert {key: schema["anyOf"][0][key] for key in bounds} == bounds
    json.dumps(schema)  # no Decimal, no text where a number belongs


def test_a_bound_no_host_holds_is_loosened_to_the_safe_side() -> None:
    """A host holds numbers as doubles: a bound between two doubles is advertised as the nearest on
    the side where the host accepts more, so it never refuses what the server takes."""
    bound = Decimal("0.10000000000000000001")
    adapter = TypeAdapter(Lenient[Annotated[Decimal, Field(gt=bound)]])
    with rendering(Rendering.RESTYLED):
        branch = adapter.json_schema()["anyOf"][0]
    assert branch == {"type": "number", "minimum": 0.1}
    with pytest.raises(ValidationError):
        adapter.validate_python("0.1")
    assert adapter.validate_python("0.10000000000000000002") == Decimal("0.10000000000000000002")


@pytest.mark.parametrize(
    "annotation",
    [
        Lenient[Annotated[Decimal, Field(multiple_of=Decimal("0.01"))]],
        Annotated[LenientDecimal, annotated_types.MultipleOf(Decimal("0.01"))],
    ],
)
def test_a_fractional_step_is_checked_but_not_advertised(annotation: Any) -> None:
    """Hosts compute ``multipleOf`` in doubles, where 0.07 is no multiple of 0.01: advertising the
    step would make a host refuse what the server takes, so only the server checks it."""
    adapter = TypeAdapter(annotation)
    assert "multipleOf" not in json.dumps(adapter.json_schema())
    assert adapter.validate_python(0.07) == Decimal("0.07")
    assert host_validator(adapter.json_schema()).is_valid(0.07)
    with pytest.raises(ValidationError):
        adapter.validate_python("0.075")


def test_digit_limits_are_checked_but_not_advertised() -> None:
    """``max_digits``/``decimal_places``: a listed exception (docs/guarantees.md): the host accepts,
    the server refuses clearly; pydantic's names never reach the schema."""
    annotation = Lenient[Annotated[Decimal, Field(max_digits=5, decimal_places=2)]]
    adapter = TypeAdapter(annotation)
    assert adapter.validate_python("123.45") == Decimal("123.45")
    schema = adapter.json_schema()
    assert "max_digits" not in json.dumps(schema)
    assert "decimal_places" not in json.dumps(schema)
    for refused, error in (("1234.5", "decimal_whole_digits"), ("1.234", "decimal_max_places")):
        assert host_validator(schema).is_valid(refused)
        with pytest.raises(ValidationError) as caught:
            adapter.validate_python(refused)
        assert caught.value.errors()[0]["type"] == error


def test_nan_allowed_by_the_author_stays_as_written() -> None:
    annotation = Annotated[Decimal, Field(allow_inf_nan=True)]
    assert lenient_annotation(annotation) is annotation


def test_the_family_finds_the_marker_for_decimal() -> None:
    marker_class = scalar_marker_class(Decimal)
    assert marker_class is not None
    assert (marker_class.json_type, marker_class.alias_name) == ("number", "LenientDecimal")


# ---- every way in


class _Pay(BaseModel):
    amount: Decimal
    tip: Optional[Decimal] = None


SENT = {"amount": "100.10", "tip": "null"}


def _pay(amount: Decimal, tip: Optional[Decimal] = None) -> str:
    return json.dumps({"amount": repr(amount), "tip": repr(tip)})


def test_by_hand_and_through_lenient() -> None:
    assert lenient_annotation(Decimal) is LenientDecimal
    assert render_annotation(lenient_annotation(Optional[Decimal])) == "Lenient[Optional[LenientDecimal]]"

    class ByHand(BaseModel):
        amount: LenientDecimal
        tip: Lenient[Optional[Decimal]] = None

    made = ByHand.model_validate(SENT)
    assert (made.amount, made.tip) == (Decimal("100.10"), None)
    assert host_validator(input_schema(ByHand)).is_valid(SENT)


def test_lenient_model() -> None:
    model = lenient_model(_Pay)
    made = model.model_validate(SENT)
    assert (made.amount, made.tip) == (Decimal("100.10"), None)
    assert host_validator(input_schema(model)).is_valid(SENT)
    # The plain model's schema admits any string, which its validator refuses: the leak closed here.
    assert host_validator(input_schema(_Pay)).is_valid({"amount": "ten"})
    assert not host_validator(input_schema(model)).is_valid({"amount": "ten"})


def test_lenient_tool() -> None:
    tool = lenient_tool(_pay)
    schema = tool_catalog([tool], style="type-array")["tools"][0]["inputSchema"]
    assert host_validator(schema).is_valid(SENT)
    assert schema["properties"]["amount"]["type"] == ["number", "string"]


async def _official() -> tuple[dict[str, Any], Any]:
    mcp = require("mcp")
    from pydantic_lenient.adapters.mcp import make_lenient

    server = require("mcp.server.mcpserver").MCPServer("t")
    make_lenient(server, lenient_parameters=True)
    server.tool()(_pay)
    async with mcp.Client(server) as client:
        schema = (await client.list_tools()).tools[0].input_schema
        result = await client.call_tool("_pay", SENT)
        return schema, None if result.is_error else json.loads(result.content[0].text)


async def _fastmcp() -> tuple[dict[str, Any], Any]:
    fastmcp = require("fastmcp")
    from pydantic_lenient.adapters.fastmcp import LenientMiddleware

    server = fastmcp.FastMCP("t", middleware=[LenientMiddleware(lenient_parameters=True)])
    server.tool(_pay)
    async with fastmcp.Client(server) as client:
        schema = (await client.list_tools())[0].input_schema
        result = await client.call_tool("_pay", SENT, raise_on_error=False)
        return schema, None if result.is_error else json.loads(result.content[0].text)


@pytest.mark.parametrize("serve", [pytest.param(_official, id="official-sdk"), pytest.param(_fastmcp, id="fastmcp")])
def test_whole_servers(serve: Any) -> None:
    schema, received = asyncio.run(serve())
    assert host_validator(schema).is_valid(SENT), schema
    assert received == {"amount": "Decimal('100.10')", "tip": "None"}


SOURCE = """
from decimal import Decimal
from typing import Annotated, Optional

from pydantic import Field


def pay(
    amount: Decimal, tip: Optional[Decimal] = None, fee: Annotated[Decimal, Field(ge=0, le=100)] = Decimal(1)
) -> str:
    return f"{amount!r} {tip!r} {fee!r}"


TOOLS = [pay]
"""


def test_the_audit_flags_a_plain_decimal_and_the_codemod_fixes_it(tmp_path: Path) -> None:
    path = tmp_path / "pay_tools.py"
    path.write_text(textwrap.dedent(SOURCE).lstrip(), encoding="utf-8")
    findings = audit(load_target(str(path)))
    assert [(finding.level, finding.suggestion) for finding in findings] == [
        ("error", "LenientDecimal"),
        ("error", "Lenient[Optional[LenientDecimal]]"),
        ("error", "Annotated[LenientDecimal, Field(ge=0, le=100)]"),
    ]
    assert main(["catalog", str(path), "--check", "--output", str(tmp_path / "before.json")]) != 0

    result = fix_file(path)

    assert len(result.changes) == 3
    assert "amount: LenientDecimal" in path.read_text(encoding="utf-8")
    assert audit(load_target(str(path))) == []
    assert main(["catalog", str(path), "--check", "--output", str(tmp_path / "after.json")]) == 0
    fixed = model_from_function(import_file(path, "fixed_pay").pay)
    made = fixed.model_validate({"amount": "0.10", "tip": "null", "fee": "5"})
    assert (made.amount, made.tip, made.fee) == (Decimal("0.10"), None, Decimal(5))  # type: ignore[attr-defined]


def test_the_normalizer_never_makes_a_decimal_an_int() -> None:
    """rules_from_model asks the marker: a Decimal gets no coercion (its exact value would not
    survive a JSON number), never the int coercion a type name's fallback once gave."""

    class Mixed(BaseModel):
        amount: Decimal
        count: int

    rules = rules_from_model(Mixed, "t")
    assert [(rule.from_, rule.coerce_to) for rule in rules] == [("count", "int")]


def test_repair_leaves_decimal_text_exact_under_the_lenient_schema() -> None:
    """Repair is schema-driven: LenientDecimal advertises number|string, so the text is already valid
    and stays as sent, digits past a double included (the validator then reads it exactly)."""
    schema = input_schema(lenient_model(_Pay))
    sent = {"amount": "0.1000000000000000000000000001"}
    result = Repairer(schema).repair(sent)
    assert result.valid
    assert result.arguments == sent
    assert not result.repairs
