"""`fix` keeps meaning and bytes: imports no name the module may shadow, rewrites only the tools it
can identify in the source, keeps line endings, the declared encoding and a BOM, refuses symlinks
unless asked, and writes atomically."""

from __future__ import annotations

import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from pydantic_lenient.cli.main import main
from pydantic_lenient.schema.catalog import model_from_function
from tests.imported import import_file

pytest.importorskip("libcst")  # the codemod extra; in dev, so CI has it

from pydantic_lenient.codemod.fix import FixError, fix_file

# A `Field` as another library's (sqlmodel's) may be: here, one that keeps no constraint at all.
SHADOW = "def Field(*args: object, **kwargs: object) -> None:\n    return None\n"


def _import(path: Path) -> Any:
    return import_file(path, "fixed")


def _write(directory: Path, name: str, source: str) -> Path:
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


def _accepts(model: type[BaseModel], arguments: dict[str, Any]) -> bool:
    try:
        model.model_validate(arguments)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("future", ["", "from __future__ import annotations\n"])
def test_a_bound_survives_a_module_that_imports_another_field(tmp_path: Path, future: str) -> None:
    (tmp_path / "shadow_fields.py").write_text(SHADOW, encoding="utf-8")
    path = _write(
        tmp_path,
        "sqlmodel_like",
        f"""
        {future}
        from typing import Optional

        from pydantic import conint

        from shadow_fields import Field


        def tool(count: Optional[conint(gt=0, lt=100)] = None) -> None:  # type: ignore[valid-type]
            pass


        TOOLS = [tool]
        """,
    )
    result = fix_file(path)
    assert result.changes
    fixed = path.read_text(encoding="utf-8")
    assert "import Field\n" not in fixed.replace("from shadow_fields import Field\n", "")
    model = model_from_function(_import(path).tool)
    assert _accepts(model, {"count": "5"})
    assert [_accepts(model, {"count": value}) for value in (0, "0", 100, "100", 99)] == [False] * 4 + [True]


def test_only_the_function_defined_at_the_runtime_line_is_rewritten(tmp_path: Path) -> None:
    source = """
        USE_TEXT = False

        if USE_TEXT:
            def tool(value: str) -> None:
                pass
        else:
            def tool(value: int) -> None:  # the one TOOLS holds
                pass


        TOOLS = [tool]
        """
    path = _write(tmp_path, "branches", source)
    result = fix_file(path)
    fixed = path.read_text(encoding="utf-8")
    assert "    def tool(value: str) -> None:\n" in fixed
    assert "    def tool(value: LenientInt) -> None:  # the one TOOLS holds\n" in fixed
    assert result.skipped == []


def test_a_model_defined_twice_under_one_name_is_left_alone(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "two_models",
        """
        from pydantic import BaseModel

        FIRST = False

        if FIRST:
            class Args(BaseModel):
                text: str
        else:
            class Args(BaseModel):
                count: int


        TOOLS = [("tool", Args)]
        """,
    )
    result = fix_file(path)
    if hasattr(BaseModel, "__firstlineno__") or sys.version_info >= (3, 13):
        assert "        count: LenientInt\n" in path.read_text(encoding="utf-8")
    else:  # no line to tell the two apart: neither is touched, and the report says so
        assert result.changes == []
        assert result.skipped == ["Args"]
    assert "        text: str\n" in path.read_text(encoding="utf-8")


def test_a_tool_imported_from_another_file_is_not_rewritten_here(tmp_path: Path) -> None:
    _write(tmp_path, "elsewhere", "def tool(count: int) -> None:\n    pass\n")
    path = _write(
        tmp_path,
        "importer",
        """
        from elsewhere import tool as imported


        def tool(count: str) -> None:
            pass


        TOOLS = [imported]
        """,
    )
    result = fix_file(path)
    assert result.changes == []
    assert "def tool(count: str)" in path.read_text(encoding="utf-8")


SOURCE_LINES = [
    "from typing import Optional",
    "",
    "",
    "def search(limit: Optional[int] = None, label: str = 'caf\u00e9') -> None:",
    "    pass",
    "",
    "",
    "TOOLS = [search]",
    "",
]


@pytest.mark.parametrize(
    ("encoding", "cookie", "newline"),
    [
        ("utf-8", "", "\r\n"),
        ("utf-8", "", "\n"),
        ("utf-8-sig", "", "\r\n"),
        ("latin-1", "# -*- coding: latin-1 -*-", "\n"),
        ("latin-1", "# -*- coding: latin-1 -*-", "\r\n"),
    ],
)
def test_line_endings_encoding_and_bom_are_kept(tmp_path: Path, encoding: str, cookie: str, newline: str) -> None:
    lines = [cookie, *SOURCE_LINES] if cookie else SOURCE_LINES
    path = tmp_path / "encoded.py"
    path.write_bytes(newline.join(lines).encode(encoding))
    path.chmod(0o640)
    fix_file(path)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") == (encoding == "utf-8-sig")
    text = data.decode(encoding)
    assert "limit: Lenient[Optional[int]] = None" in text
    assert "'caf\u00e9'" in text
    assert text.count("\n") == text.count(newline)  # every line ending as written, the added ones too
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["encoded.py"]  # no temporary left
    assert _import(path).search.__annotations__["limit"] is not None


def test_a_symlink_is_refused_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = _write(tmp_path, "real", "def tool(count: int) -> None:\n    pass\n\n\nTOOLS = [tool]\n")
    link = tmp_path / "link.py"
    link.symlink_to(target)
    before = target.read_bytes()
    with pytest.raises(FixError, match="symlink"):
        fix_file(link)
    assert main(["fix", str(link)]) == 2
    assert "is a symlink" in capsys.readouterr().err
    assert target.read_bytes() == before
    assert main(["fix", str(link), "--follow-symlinks"]) == 0
    assert link.is_symlink()
    assert "count: LenientInt" in target.read_text(encoding="utf-8")


# The annotations the mapping covers, written as a module would: scalars, bounds, literals, and
# Optional, list and `| None` around them.
_BOUNDS = st.tuples(st.integers(-5, 5), st.integers(1, 10)).map(lambda pair: (pair[0], pair[0] + pair[1]))
_SCALARS = st.one_of(
    st.sampled_from(["int", "float", "bool", "str", "Literal[1, 2]", "Literal['a', 'b']"]),
    _BOUNDS.map(lambda bounds: f"conint(gt={bounds[0]}, lt={bounds[1]})"),
    _BOUNDS.map(lambda bounds: f"conint(ge={bounds[0]}, le={bounds[1]})"),
    _BOUNDS.map(lambda bounds: f"confloat(ge={bounds[0]}, le={bounds[1]})"),
    _BOUNDS.map(lambda bounds: f"Annotated[int, PydanticField(gt={bounds[0]}, le={bounds[1]})]"),
)
_ANNOTATIONS = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        inner.map(lambda text: f"Optional[{text}]"),
        inner.map(lambda text: f"list[{text}]"),
        inner.map(lambda text: f"{text} | None"),
    ),
    max_leaves=3,
)
# Constraints in the parameter's `Field(...)` default, as MCP servers write them, on an Optional or a
# plain int, float or list (pydantic's Field, here PydanticField: the module's `Field` is another).
_DEFAULTED_KINDS = st.sampled_from(["int", "float", "list[int]", "list[conint(ge=0)]"])


@st.composite
def _defaulted(draw: st.DrawFn) -> tuple[str, str]:
    """An annotation and its ``PydanticField(default, <constraints>)`` default."""
    kind = draw(_DEFAULTED_KINDS)
    optional = draw(st.sampled_from([None, "Optional[{}]", "{} | None"]))
    low, high = draw(_BOUNDS)
    if kind.startswith("list"):
        constraints = draw(st.sampled_from([f"min_length={max(low, 0)}", f"max_length={max(high, 0)}"]))
    else:
        names = draw(st.sampled_from([("ge", "le"), ("gt", "lt"), ("ge", "lt")]))
        constraints = f"{names[0]}={low}, {names[1]}={high}"
        if draw(st.booleans()):
            constraints += ", multiple_of=2" if kind == "int" else ", multiple_of=0.5"
    default = "None" if optional else draw(st.sampled_from(["...", "[]" if kind.startswith("list") else str(high)]))
    written = kind if optional is None else optional.format(kind)
    keyword = draw(st.sampled_from(["", "default="])) if default != "..." else ""
    return written, f"PydanticField({keyword}{default}, {constraints})"


_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-20, 20),
        st.floats(-20, 20, allow_nan=False),
        st.sampled_from(["0", "5", "-3", "1.5", "100", "true", "False", "null", "a", "[1, 2]", '["5"]', "[0]", ""]),
    ),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=4,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    annotations=st.lists(_ANNOTATIONS, min_size=1, max_size=2),
    defaulted=st.lists(_defaulted(), max_size=2),
    future=st.booleans(),
    data=st.data(),
)
def test_the_fixed_module_refuses_everything_the_original_refused(
    annotations: list[str], defaulted: list[tuple[str, str]], future: bool, data: st.DataObject
) -> None:
    """Whatever the fixed tool or model accepts, it turns into a value the original accepts as it is:
    only the wrong-typed forms are added, never a value a bound, a literal or a type refused."""
    # The defaulted parameters come last, as Python wants them.
    written = [f"p{index}: {text}" for index, text in enumerate(annotations)]
    written += [f"p{len(annotations) + index}: {text} = {default}" for index, (text, default) in enumerate(defaulted)]
    parameters = ", ".join(written)
    fields = "".join(f"    {parameter}\n" for parameter in written)
    source = (
        ("from __future__ import annotations\n" if future else "")
        + "from typing import Annotated, Literal, Optional\n\n"
        + "from pydantic import BaseModel, confloat, conint\n"
        + "from pydantic import Field as PydanticField\n\n"
        + "from shadow_fields import Field\n\n\n"
        + f"class Args(BaseModel):\n{fields}\n\n"
        + f"def tool({parameters}) -> None:\n    pass\n\n\n"
        + 'TOOLS = [tool, ("args", Args)]\n'
    )
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        (folder / "shadow_fields.py").write_text(SHADOW, encoding="utf-8")
        (folder / "original.py").write_text(source, encoding="utf-8")
        (folder / "fixed.py").write_text(source, encoding="utf-8")
        assert fix_file(folder / "fixed.py").kept == []  # every generated default's constraints move
        original, fixed = _import(folder / "original.py"), _import(folder / "fixed.py")
    pairs = [
        (model_from_function(original.tool), model_from_function(fixed.tool)),
        (original.Args, fixed.Args),
    ]
    for _ in range(8):
        arguments = {f"p{index}": data.draw(_VALUES) for index in range(len(written))}
        for original_model, fixed_model in pairs:
            try:
                validated = fixed_model.model_validate(arguments).model_dump()
            except ValidationError:
                continue
            assert original_model.model_validate(validated).model_dump() == validated, (arguments, annotations)
