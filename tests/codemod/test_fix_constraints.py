"""`fix` moves the constraints of a ``Field(...)`` default into the annotation it rewrites.

``limit: int | None = Field(default=None, ge=1, le=500)`` made lenient as
``Lenient[int | None] = Field(default=None, ge=1, le=500)`` leaves the bounds after the lenient
marker: pydantic's own JSON Schema (what a plain FastMCP or MCP SDK server lists) then carries the
non-keywords ``ge``/``le`` inside the ``anyOf`` (pydantic/pydantic#11576), so hosts admit 0 and the
server refuses it, and pydantic checks them in Python after-validators. On a plain ``int`` the
written ``LenientInt = Field(100, ge=1, le=100)`` is worse: pydantic puts the default's
constraints before the annotation's marker, which then builds its schema without them. Moved
inside (``Lenient[Annotated[int | None, Field(ge=1, le=500)]] = Field(default=None)``), the
mapping folds them into the marker: advertised as JSON Schema, checked natively.
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import pytest
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, create_model
from pydantic._internal import _validators
from pydantic.fields import FieldInfo

from pydantic_lenient import Lenient
from pydantic_lenient.cli.main import main
from pydantic_lenient.schema.catalog import model_from_function
from tests.imported import import_file

pytest.importorskip("libcst")  # the codemod extra; in dev, so CI has it

from pydantic_lenient.codemod.fix import fix_file

_ANNOTATED: Any = Annotated  # subscripted with run-time values
_LENIENT: Any = Lenient
# The constraint keywords of `Field(...)` that are not JSON Schema keywords (`pattern` is one).
NON_KEYWORDS = frozenset(FieldInfo.metadata_lookup) - {"pattern"}


class Shape(NamedTuple):
    written: str
    """A parameter's annotation and default, as a module writes it."""
    bounds: tuple[float, ...]
    fixed: str
    """What `fix` writes."""


SHAPES = [
    Shape(
        "int | None = Field(default=None, ge=2000, le=6500)",
        (2000, 6500),
        "Lenient[Annotated[int | None, Field(ge=2000, le=6500)]] = Field(default=None)",
    ),
    Shape("int = Field(100, ge=1, le=100)", (1, 100), "Lenient[Annotated[int, Field(ge=1, le=100)]] = Field(100)"),
    Shape(
        "float | None = Field(default=None, ge=0, le=100)",
        (0, 100),
        "Lenient[Annotated[float | None, Field(ge=0, le=100)]] = Field(default=None)",
    ),
    # Written by hand, and leaking as the codemod's old output did.
    Shape(
        "Optional[LenientInt] = Field(None, ge=1, le=500)",
        (1, 500),
        "Lenient[Annotated[Optional[LenientInt], Field(ge=1, le=500)]] = Field(None)",
    ),
    Shape(
        "Optional[LenientFloat] = Field(None, gt=0, lt=1)",
        (0, 1),
        "Lenient[Annotated[Optional[LenientFloat], Field(gt=0, lt=1)]] = Field(None)",
    ),
    Shape(
        'Optional[int] = Field(default=20, description="Most results", ge=1, le=100)',
        (1, 100),
        'Lenient[Annotated[Optional[int], Field(ge=1, le=100)]] = Field(default=20, description="Most results")',
    ),
    Shape(
        "int = Field(..., gt=0, multiple_of=3)",
        (0, 3),
        "Lenient[Annotated[int, Field(gt=0, multiple_of=3)]] = Field(...)",
    ),
    Shape("int = Field(0, ge=0)", (0,), "LenientUInt = Field(0)"),
    Shape(
        "list[int] | None = Field(None, max_length=3)",
        (3,),
        "Lenient[Annotated[list[int] | None, Field(max_length=3)]] = Field(None)",
    ),
]

HEADER = """\
from typing import Annotated, Optional

from pydantic import BaseModel, Field

from pydantic_lenient import Lenient, LenientFloat, LenientInt, LenientUInt
"""


def _module(shape: Shape) -> str:
    return (
        f"{HEADER}\n\n"
        f"def tool(value: {shape.written}) -> None:\n    pass\n\n\n"
        f"class Tool(BaseModel):\n    value: {shape.written}\n\n\n"
        'TOOLS = [tool, ("tool", Tool)]\n'
    )


def _import(path: Path) -> Any:
    return import_file(path, "fix_constraints")


class Fixed(NamedTuple):
    original: list[type[BaseModel]]
    fixed: list[type[BaseModel]]
    text: str


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Shape], Fixed]:
    """Each shape's module, as written and as `fix` rewrites it (once per shape)."""
    done: dict[Shape, Fixed] = {}

    def fix(shape: Shape) -> Fixed:
        if shape not in done:
            directory = tmp_path_factory.mktemp("constraints")
            (directory / "original.py").write_text(_module(shape), encoding="utf-8")
            (directory / "fixed.py").write_text(_module(shape), encoding="utf-8")
            assert fix_file(directory / "fixed.py").kept == []
            assert fix_file(directory / "fixed.py").changes == []  # a second run changes nothing
            original, rewritten = _import(directory / "original.py"), _import(directory / "fixed.py")
            done[shape] = Fixed(
                [model_from_function(original.tool), original.Tool],
                [model_from_function(rewritten.tool), rewritten.Tool],
                (directory / "fixed.py").read_text(encoding="utf-8"),
            )
        return done[shape]

    return fix


def _non_keywords(schema: Any, parent: str = "") -> list[str]:
    """Where ``schema`` holds a constraint name JSON Schema does not know (not as a property name)."""
    found = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in NON_KEYWORDS and parent not in ("properties", "$defs"):
                found.append(key)
            found += _non_keywords(value, key)
    elif isinstance(schema, list):
        for item in schema:
            found += _non_keywords(item)
    return found


def _python_bound_checks(schema: Any) -> list[str]:
    """pydantic's Python after-validators (``function-after`` around a ``functools.partial`` of
    `pydantic._internal._validators`): how it checks bounds it cannot put in a schema."""
    found = []
    if isinstance(schema, dict):
        function = schema.get("function", {}).get("function") if schema.get("type") == "function-after" else None
        if isinstance(function, functools.partial) and function.func.__module__ == _validators.__name__:
            found.append(function.func.__name__)
        for value in schema.values():
            found += _python_bound_checks(value)
    elif isinstance(schema, list):
        for item in schema:
            found += _python_bound_checks(item)
    return found


def _mapped(model: type[BaseModel]) -> type[BaseModel]:
    """The mapping's form of the original field (as `Lenient[T]` and `lenient_tool` make it)."""
    field = model.model_fields["value"]
    parts = (field.annotation, *field.metadata)
    annotation = _ANNOTATED[parts] if field.metadata else field.annotation
    return create_model("Mapped", value=(_LENIENT[annotation], field.default))


def _values(bounds: tuple[float, ...]) -> list[Any]:
    """Values at and past each bound, native and as strings, and None in both forms."""
    values: list[Any] = [None, "null", "abc", True]
    for bound in bounds:
        for edge in (bound - 1, bound - 0.5, bound, bound + 0.5, bound + 1):
            native = int(edge) if float(edge).is_integer() else edge
            values += [native, str(native), [1] * max(int(edge), 0), f"[{', '.join(['1'] * max(int(edge), 0))}]"]
    return values


def _verdict(model: type[BaseModel], value: Any) -> tuple[bool, Any]:
    try:
        return True, model.model_validate({"value": value}).model_dump()["value"]
    except ValidationError:
        return False, None


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.written for shape in SHAPES])
def test_fix_writes_the_constraints_inside_the_annotation(fixed: Callable[[Shape], Fixed], shape: Shape) -> None:
    text = fixed(shape).text
    assert f"def tool(value: {shape.fixed}) -> None:\n" in text
    assert f"    value: {shape.fixed}\n" in text


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.written for shape in SHAPES])
def test_pydantics_own_schema_of_the_fixed_shape_has_only_json_schema_keywords(
    fixed: Callable[[Shape], Fixed], shape: Shape
) -> None:
    for model in fixed(shape).fixed:
        assert _non_keywords(model.model_json_schema()) == [], (model, model.model_json_schema())


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.written for shape in SHAPES])
def test_the_fixed_shape_decides_every_value_as_the_mapping_does(fixed: Callable[[Shape], Fixed], shape: Shape) -> None:
    both = fixed(shape)
    values = _values(shape.bounds)
    for original, model in zip(both.original, both.fixed, strict=True):
        expected = [_verdict(_mapped(original), value) for value in values]
        assert [_verdict(model, value) for value in values] == expected, model
        assert any(accepted for accepted, _ in expected)
        assert not all(accepted for accepted, _ in expected)
        # Nothing the original refused, once converted: the bounds hold.
        for accepted, value in expected:
            if accepted:
                assert _verdict(original, value) == (True, value)


@pytest.mark.parametrize("shape", SHAPES, ids=[shape.written for shape in SHAPES])
def test_the_fixed_shape_checks_its_bounds_natively(fixed: Callable[[Shape], Fixed], shape: Shape) -> None:
    for model in fixed(shape).fixed:
        assert _python_bound_checks(TypeAdapter(model).core_schema) == [], model


def test_the_old_placements_are_what_the_checks_catch() -> None:
    """The checks above fail on what `fix` used to write, so they can fail."""
    # A bare Optional of a lenient type: `Lenient[int | None]` there would move pydantic's names onto
    # the number branch when it writes its part of the portable shape (its pattern stays wide).
    leaking = create_model("Leaking", value=(_LENIENT[int] | None, Field(None, ge=1, le=500)))
    assert _non_keywords(leaking.model_json_schema()) == ["ge", "le"]
    assert sorted(_python_bound_checks(TypeAdapter(leaking).core_schema)) == [
        "greater_than_or_equal_validator",
        "less_than_or_equal_validator",
    ]
    # A bound lost on the way (the lenient types now take in a default's bound, pydantic#10507).
    unbounded = create_model("Unbounded", value=(_LENIENT[int], 100))
    strict = create_model("Plain", value=(int, Field(100, ge=1, le=100)))
    assert _verdict(strict, 101) == (False, None)
    assert _verdict(unbounded, 101) != _verdict(_mapped(strict), 101)


def _write(directory: Path, name: str, source: str) -> Path:
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


def test_the_rest_of_the_field_call_and_the_formatting_stay_as_written(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "formatted",
        '''
        from typing import Optional

        from pydantic import BaseModel, Field

        LIMIT = 500


        def search(
            folder: str = Field("INBOX", max_length=40),  # a str stays as written
            limit: Optional[int] = Field(None, ge=1, le=LIMIT),  # a name may be bound again: not moved
            offset: int | None = Field(default=None, ge=0, description="Skip this many"),
            page_size: int = Field(
                20,
                description="Per page",  # shown to the model
                ge=1,
                le=100,
            ),
            ratio: float = Field(..., gt=0, lt=1, title="Ratio"),
            step: int = Field(ge=2),
        ) -> None:
            """Search."""


        class Query(BaseModel):
            size: int | None = Field(default=None, ge=1, le=9, alias="Size", examples=[2])


        TOOLS = [search, ("query", Query)]
        ''',
    )
    result = fix_file(path)
    assert (
        path.read_text(encoding="utf-8")
        == textwrap.dedent(
            '''
        from typing import Annotated, Optional

        from pydantic import BaseModel, Field
        from pydantic_lenient import Lenient

        LIMIT = 500


        def search(
            folder: str = Field("INBOX", max_length=40),  # a str stays as written
            limit: Optional[int] = Field(None, ge=1, le=LIMIT),  # a name may be bound again: not moved
            offset: Lenient[Annotated[int | None, Field(ge=0)]] = Field(default=None, description="Skip this many"),
            page_size: Lenient[Annotated[int, Field(ge=1, le=100)]] = Field(
                20,
                description="Per page",  # shown to the model
            ),
            ratio: Lenient[Annotated[float, Field(gt=0, lt=1)]] = Field(..., title="Ratio"),
            step: Lenient[Annotated[int, Field(ge=2)]] = Field(),
        ) -> None:
            """Search."""


        class Query(BaseModel):
            size: Lenient[Annotated[int | None, Field(ge=1, le=9)]] = Field(default=None, alias="Size", examples=[2])


        TOOLS = [search, ("query", Query)]
        '''
        ).lstrip()
    )
    assert result.changes[0] == (
        "search.offset: int | None -> Lenient[Annotated[int | None, Field(ge=0)]] (ge moved out of its default)"
    )
    assert result.kept == ["search.limit: left as written: its default's constraints cannot be moved into it"]
    assert fix_file(path).changes == []
    module = _import(path)
    search = model_from_function(module.search)
    assert search.model_fields["offset"].description == "Skip this many"
    assert search.model_json_schema()["properties"]["ratio"]["title"] == "Ratio"
    assert module.Query.model_validate({"Size": "9"}).size == 9
    assert module.Query.model_json_schema()["properties"]["Size"]["examples"] == [2]
    with pytest.raises(ValidationError):
        module.Query.model_validate({"Size": "10"})


def test_a_field_the_module_shadows_is_written_under_an_alias(tmp_path: Path) -> None:
    (tmp_path / "shadow_fields.py").write_text("def Field(*args: object, **kwargs: object) -> None:\n    return None\n")
    path = _write(
        tmp_path,
        "shadowed",
        """
        from typing import Optional

        from pydantic import Field as PydanticField

        from shadow_fields import Field


        def tool(value: Optional[int] = PydanticField(None, ge=1, le=500)) -> None:
            pass


        TOOLS = [tool]
        """,
    )
    fix_file(path)
    fixed = path.read_text(encoding="utf-8")
    assert (
        "def tool(value: Lenient[Annotated[Optional[int], _lenient_Field(ge=1, le=500)]] = PydanticField(None))"
        in fixed
    )
    assert "from pydantic import Field as _lenient_Field, Field as PydanticField\n" in fixed
    model = model_from_function(_import(path).tool)
    assert [_verdict(model, value)[0] for value in (0, "0", 1, "1", "500", 501, "501", "null")] == [
        False,
        False,
        True,
        True,
        True,
        False,
        False,
        True,
    ]


def test_constraints_that_cannot_move_leave_the_parameter_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(
        tmp_path,
        "field_maker",
        """
        import pydantic


        def Field(*args, **kwargs):
            return pydantic.Field(*args, **kwargs)
        """,
    )
    source = """
        from typing import Annotated, Optional

        import pydantic
        from pydantic import AfterValidator

        from field_maker import Field

        BOUNDS = {"ge": 1, "le": 5}


        def doubled(value: int) -> int:
            return value * 2


        def other_field(count: int = Field(1, ge=1, le=5)) -> None:
            pass


        def spread(count: int = pydantic.Field(1, **BOUNDS)) -> None:
            pass


        def validated(count: Annotated[int, AfterValidator(doubled)] = pydantic.Field(1, ge=1)) -> None:
            pass


        def inner(count: Optional[Annotated[int, AfterValidator(doubled)]] = pydantic.Field(None, ge=3)) -> None:
            pass


        class Holder:
            SIZE = 5

            def method(self, count: int = pydantic.Field(1, le=SIZE)) -> None:
                pass


        TOOLS = [other_field, spread, validated, inner, Holder().method]
        """
    path = _write(tmp_path, "kept", source)
    original = path.read_text(encoding="utf-8")
    assert main(["fix", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == original
    printed = capsys.readouterr().err
    for where in ("other_field.count", "spread.count", "validated.count", "inner.count", "Holder.method.count"):
        assert f"{where}: left as written" in printed
    result = fix_file(path)
    assert len(result.kept) == 5
    assert result.changes == []
