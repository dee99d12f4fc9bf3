from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, RootModel

from pydantic_lenient import (
    STYLES,
    LenientFloat,
    LenientInt,
    LenientUInt,
    StrictBoolish,
    Style,
    apply_style,
    generator_for,
    input_schema,
    lenient_model,
)
from pydantic_lenient.hosts import PROFILES
from pydantic_lenient.testing import host_validator
from pydantic_lenient.types.portable_rules import Rendering, rendering
from tests.strategies import any_input


class Mail(BaseModel):
    folder: str
    limit: Optional[LenientUInt] = None
    offset: LenientUInt = 0
    dry_run: StrictBoolish = False


def test_optional_uint_flattens_to_the_rust_shape() -> None:
    schema = input_schema(Mail, style="type-array")
    assert schema["type"] == "object"
    assert schema["properties"]["limit"] == {
        "type": ["integer", "string", "null"],
        "minimum": 0,
        "pattern": "^[0-9]+$",
        "default": None,
        "title": "Limit",
    }


def test_any_of_style_has_one_branch_per_type() -> None:
    assert input_schema(Mail, style="any-of")["properties"]["limit"] == {
        "anyOf": [
            {"minimum": 0, "type": "integer"},
            {"pattern": "^[0-9]+$", "type": "string"},
            {"type": "null"},
        ],
        "default": None,
        "title": "Limit",
    }


def test_strict_style_advertises_canonical_types_only() -> None:
    properties = input_schema(Mail, style="strict")["properties"]
    assert properties["offset"] == {"default": 0, "minimum": 0, "title": "Offset", "type": "integer"}
    assert properties["dry_run"] == {"default": False, "title": "Dry Run", "type": "boolean"}
    assert "pattern" not in str(properties)


def test_plain_model_json_schema_is_unflattened_but_standard() -> None:
    assert Mail.model_json_schema()["properties"]["offset"] == {
        "anyOf": [{"minimum": 0, "type": "number"}, {"pattern": "^[0-9]+$", "type": "string"}],
        "default": 0,
        "title": "Offset",
    }
    with rendering(Rendering.RESTYLED):
        assert Mail.model_json_schema()["properties"]["offset"]["anyOf"][0] == {"minimum": 0, "type": "integer"}


def test_unknown_style_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown style"):
        input_schema(Mail, style="loose")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown style"):
        generator_for("loose")  # type: ignore[arg-type]


def test_root_must_be_an_object() -> None:
    with pytest.raises(TypeError, match="JSON object"):
        input_schema(RootModel[list[int]])


class Node(BaseModel):
    name: str
    children: list[Node] = []


def test_recursive_model_root_is_inlined_and_refs_resolve() -> None:
    schema = input_schema(Node)
    assert schema["type"] == "object"
    assert host_validator(schema).is_valid({"name": "a", "children": [{"name": "b"}]})
    assert not host_validator(schema).is_valid({"name": "a", "children": [{"name": 1}]})


# Random small schemas built from the shapes pydantic emits, to check the rewrites keep their meaning.
_leaf = st.one_of(
    st.just({"type": "integer", "minimum": 0}),
    st.just({"type": "string", "pattern": "^[0-9]+$"}),
    st.just({"type": "null"}),
    st.just({"type": "boolean"}),
    st.just({"type": "number", "maximum": 5}),
    st.just({"type": "array", "items": {"type": "integer"}}),
    st.just({"type": "string", "maxLength": 2}),
    st.just({"type": ["integer", "string"], "minimum": 1, "maxLength": 3}),
    st.just({"enum": [1, "1"]}),
)
_schemas = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3).map(lambda branches: {"anyOf": branches})
        | st.tuples(st.lists(inner, min_size=1, max_size=3), st.sampled_from([{}, {"title": "t"}])).map(
            lambda pair: {"anyOf": pair[0], **pair[1]}
        )
    ),
    max_leaves=6,
)


@pytest.mark.parametrize("style", ["type-array", "any-of"])
@given(schema=_schemas, value=any_input)
def test_style_rewrites_never_change_what_a_schema_admits(style: Any, schema: dict[str, Any], value: Any) -> None:
    rewritten = apply_style(schema, style)
    assert host_validator(rewritten).is_valid(value) == host_validator(schema).is_valid(value)
    if style == "any-of":
        assert "'type': [" not in str(rewritten)


def test_rewrites_leave_data_keywords_alone() -> None:
    schema = {
        "type": "object",
        "properties": {"anyOf": {"type": "string"}},
        "default": {"anyOf": [{"anyOf": [1]}]},
        "enum": [{"type": ["a", "b"]}],
    }
    assert apply_style(schema, "type-array") == schema
    assert apply_style(schema, "any-of") == schema


class Cat(BaseModel):
    kind: Literal["cat"]


class Dog(BaseModel):
    kind: Literal["dog"]


class Adopt(BaseModel):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]
    discriminator: str = "kept: a property may be called that"


@pytest.mark.parametrize("style", ["type-array", "any-of", "strict"])
def test_openapi_discriminator_is_dropped_and_the_one_of_kept(style: Any) -> None:
    schema = input_schema(Adopt, style=style)
    assert "discriminator" not in schema["properties"]["pet"]
    assert schema["properties"]["discriminator"]["type"] == "string"
    assert len(schema["properties"]["pet"]["oneOf"]) == 2
    assert host_validator(schema).is_valid({"pet": {"kind": "cat"}})
    assert not host_validator(schema).is_valid({"pet": {"kind": "cow"}})


SUITE = Path(__file__).parent.parent / "data" / "json-schema-test-suite"
SUITE_GROUPS = [
    pytest.param(group, "07" if draft == "draft7" else "2020-12", id=f"{draft}/{path.stem}/{index}")
    for draft in ("draft2020-12", "draft7")
    for path in sorted((SUITE / draft).glob("*.json"))
    for index, group in enumerate(json.loads(path.read_text(encoding="utf-8")))
    if isinstance(group["schema"], dict)
]


@pytest.mark.parametrize(("group", "draft"), SUITE_GROUPS)
@pytest.mark.parametrize("style", ["type-array", "any-of"])
def test_style_rewrites_keep_every_suite_verdict(group: dict[str, Any], draft: Any, style: Any) -> None:
    rewritten = apply_style(group["schema"], style)
    validator = host_validator(rewritten, draft=draft, check=False)
    for test in group["tests"]:
        assert validator.is_valid(test["data"]) == test["valid"], test["description"]


# Models whose schemas hold every widened form: scalars, bounds, JSON text both ways, unions, $defs.
def _style_corpus() -> dict[str, type[BaseModel]]:
    from pydantic_lenient.schema.catalog import model_from_function
    from tests.contract import SCALAR_TYPES, tool_model
    from tests.types_.test_json_values import Tool

    corpus: dict[str, type[BaseModel]] = {"json-values": Tool, "mail": Mail, "adopt": Adopt, "node": Node}
    for name, (annotation, _) in SCALAR_TYPES.items():
        corpus[name] = tool_model(annotation, optional=False)
        corpus[f"Optional[{name}]"] = tool_model(annotation, optional=True)

    def unions(
        a: Union[LenientUInt, str],
        b: Optional[Union[LenientInt, list[int]]] = None,
        c: Union[StrictBoolish, LenientFloat] = True,
    ) -> None:
        """Lenient types inside a user's unions."""

    corpus["unions"] = model_from_function(unions)
    return corpus


STYLE_CORPUS = _style_corpus()


@pytest.mark.parametrize("target", STYLES)
@pytest.mark.parametrize("source", STYLES)
@pytest.mark.parametrize("name", list(STYLE_CORPUS))
def test_every_style_comes_out_the_same_from_a_model_or_from_any_finished_schema(
    name: str, source: Style, target: Style
) -> None:
    model = STYLE_CORPUS[name]
    expected = input_schema(model, style=target)
    with rendering(Rendering.RESTYLED):  # any generator, with the markers' any-of fragments
        finished = model.model_json_schema()
    assert apply_style(model, target) == apply_style(finished, target)
    assert input_schema(finished, style=target) == expected
    # The strict style loses the string forms, and the portable one integer types and enums, by design.
    if source not in ("strict", "portable") or source == target:
        assert input_schema(input_schema(model, style=source), style=target) == expected


@pytest.mark.parametrize("name", list(STYLE_CORPUS))
def test_pydantic_s_own_generator_writes_what_the_portable_style_reads_the_same(name: str) -> None:
    """A hand-written lenient type listed by an SDK's plain ``model_json_schema()`` writes its part
    of the portable shape (issue 33), which the portable style completes to the default listing
    (a union's model branch written out in place of its typed ``$ref``), and every host lists."""
    model = STYLE_CORPUS[name]
    plain = model.model_json_schema()
    assert input_schema(plain)["properties"] == _typed_references_inlined(input_schema(model))["properties"]
    for host in PROFILES.values():
        assert host.listing(input_schema(plain)).accepted, host.name
    # Cursor compares each branch's type with typeof, which says "number".
    assert not [branch for branch in _any_of_branches(plain) if branch.get("type") == "integer"]


def _typed_references_inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each union's ``$ref`` branch (typed by the portable style) written as a copy of
    its definition, as a lenient type writes it under pydantic's own generator (`inlined_branch`)."""

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: inline(value) for key, value in node.items()}
        if isinstance(node.get("anyOf"), list):
            node["anyOf"] = [_inlined(branch) for branch in node["anyOf"]]
        return node

    def _inlined(branch: Any) -> Any:
        if not (isinstance(branch, dict) and isinstance(branch.get("$ref"), str) and "type" in branch):
            return branch
        target = schema["$defs"][branch["$ref"].rpartition("/")[2]]
        rest = {key: value for key, value in branch.items() if key not in ("$ref", "type")}
        return {**target, **rest}

    return {**schema, "properties": inline(schema["properties"])}


def _any_of_branches(node: Any) -> Iterator[Any]:
    """Every branch of every ``anyOf`` in ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "anyOf" and isinstance(value, list):
                yield from value
            yield from _any_of_branches(value)
    elif isinstance(node, list):
        for item in node:
            yield from _any_of_branches(item)


@pytest.mark.parametrize("name", list(STYLE_CORPUS))
def test_the_strict_style_has_no_string_form_left(name: str) -> None:
    text = json.dumps(input_schema(STYLE_CORPUS[name], style="strict"))
    assert "pattern" not in text
    assert '"type": [' not in text


def test_strict_style_of_json_text_keeps_the_canonical_side() -> None:
    from tests.types_.test_json_values import Tool

    properties = apply_style(Tool.model_json_schema(), "strict")["properties"]
    assert properties["urls"] == {
        "anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
        "default": None,
        "title": "Urls",
    }
    assert properties["typed_edits"]["anyOf"][0]["contentMediaType"] == "application/json"
    assert [branch.get("type") for branch in properties["typed_edits"]["anyOf"]] == ["string", "null"]


def test_a_source_that_is_neither_a_model_nor_a_schema_is_refused() -> None:
    with pytest.raises(TypeError, match="pydantic model class or a JSON schema"):
        apply_style([{"type": "integer"}], "strict")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown style"):
        apply_style({"type": "integer"}, "loose")  # type: ignore[arg-type]


@given(schema=_schemas, value=any_input)
def test_the_strict_rewrite_only_ever_narrows(schema: dict[str, Any], value: Any) -> None:
    if host_validator(apply_style(schema, "strict")).is_valid(value):
        assert host_validator(schema).is_valid(value)
    if not isinstance(value, str):  # only string forms are dropped, never another type's values
        assert host_validator(apply_style(schema, "strict")).is_valid(value) == host_validator(schema).is_valid(value)


@pytest.mark.parametrize(("group", "draft"), SUITE_GROUPS)
def test_the_strict_rewrite_keeps_every_suite_verdict(group: dict[str, Any], draft: Any) -> None:
    """No suite schema holds a lenient type's widened form, so strict must change none of them."""
    validator = host_validator(apply_style(group["schema"], "strict"), draft=draft, check=False)
    for test in group["tests"]:
        assert validator.is_valid(test["data"]) == test["valid"], test["description"]


@pytest.mark.parametrize("name", list(STYLE_CORPUS))
def test_the_portable_style_is_listed_by_every_host_profile_and_is_its_own_style(name: str) -> None:
    from pydantic_lenient.hosts import PROFILES
    from pydantic_lenient.schema.styles import is_in_style

    schema = input_schema(STYLE_CORPUS[name], style="portable")
    assert '"type": [' not in json.dumps(schema)
    assert is_in_style(schema, "portable")
    assert apply_style(schema, "portable") == schema
    refused = {
        host.name: host.listing(schema).reasons for host in PROFILES.values() if not host.listing(schema).accepted
    }
    assert not refused


class Choices(BaseModel):
    picks: list[Literal[1, 2, 3]]
    level: Literal[-1, 0, 7] = 0


def test_the_strict_style_drops_an_integer_enums_digit_strings() -> None:
    """`DigitText`'s pattern beside its enum is a lenient form like any other: ``strict`` drops it,
    so the portable shape's ``items`` is one type (the Gemini API refuses a union ``items``)."""
    model = lenient_model(Choices)
    strict = input_schema(model, style="strict")["properties"]
    assert strict["picks"]["items"] == {"enum": [1, 2, 3], "type": "integer"}
    assert strict["level"] == {"enum": [-1, 0, 7], "type": "integer", "default": 0, "title": "Level"}
    assert input_schema(model)["properties"]["picks"]["anyOf"][0]["items"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 3,
    }
    # Another pattern beside the enum is no lenient form: kept.
    odd = {"anyOf": [{"type": "integer", "enum": [1, 2]}, {"type": "string", "pattern": "^(?:0*1|0*3)$"}]}
    assert apply_style(odd, "strict") == odd
