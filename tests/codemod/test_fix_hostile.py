"""`fix` never writes a file whose tools do not build, or mean something else (issue 36, item 10):
what the mapping keeps as written stays so in the file, a constraint moves only when its value is
a literal, a read-only file is refused, and the rewritten module is imported in a child and checked
against the original before the file is replaced."""

from __future__ import annotations

import os
import stat
import textwrap
from pathlib import Path
from typing import Any

import libcst
import pytest
from pydantic import ValidationError

from pydantic_lenient.cli.main import main
from pydantic_lenient.codemod import fix as fix_module
from pydantic_lenient.codemod._check_child import problems
from pydantic_lenient.codemod.fix import FixError, fix_file
from pydantic_lenient.schema.catalog import model_from_function
from tests.imported import import_file

HOSTILE = """
from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, Json, model_validator

LOW = 3


class One(BaseModel):
    kind: Literal[1]
    x: int


class Two(BaseModel):
    kind: Literal[2]
    y: int


class Color(BaseModel):
    red: int = 0

    @model_validator(mode="before")
    @classmethod
    def named(cls, value: Any) -> Any:
        return {"red": 255} if value == "red" else value


def strict_tool(n: int = Field(5, ge=2, strict=True), m: int = 0) -> str:
    return f"{n} {m}"


def named_bound(n: int = Field(..., ge=LOW)) -> str:
    return str(n)


def json_tool(numbers: Json[list[int]], count: int = 0) -> str:
    return str(numbers)


def tagged(shape: Annotated[Union[One, Two], Field(discriminator="kind")], count: int = 0) -> str:
    return str(shape)


def colored(color: Color, count: int = 0) -> str:
    return str(color)


LOW = 100  # bound again: an annotation read now would say 100
TOOLS = [strict_tool, named_bound, json_tool, tagged, colored]
"""


def _write(directory: Path, name: str, source: str) -> Path:
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


def test_what_cannot_be_rebuilt_stays_as_written_and_the_rest_is_rewritten(tmp_path: Path) -> None:
    path = _write(tmp_path, "hostile_tools", HOSTILE)
    result = fix_file(path)
    text = path.read_text(encoding="utf-8")
    for kept in (
        "def strict_tool(n: int = Field(5, ge=2, strict=True), m: LenientInt = 0)",
        "def named_bound(n: int = Field(..., ge=LOW))",
        "def json_tool(numbers: Json[list[int]], count: LenientInt = 0)",
        'def tagged(shape: Annotated[Union[One, Two], Field(discriminator="kind")], count: LenientInt = 0)',
        "def colored(color: Color, count: LenientInt = 0)",
    ):
        assert kept in text
    assert sorted(result.kept) == [
        "named_bound.n: left as written: its default's constraints cannot be moved into it",
        "strict_tool.n: left as written: its default's constraints cannot be moved into it",
    ]
    module = import_file(path, "fix_hostile")
    named = model_from_function(module.named_bound)
    assert named.model_validate({"n": 3}).model_dump() == {"n": 3}  # the bound the default had when it was evaluated
    with pytest.raises(ValidationError):
        named.model_validate({"n": 2})
    assert model_from_function(module.strict_tool).model_validate({"n": 2, "m": "4"}).model_dump() == {"n": 2, "m": 4}
    assert model_from_function(module.json_tool).model_validate({"numbers": "[1, 2]"}).model_dump()["numbers"] == [1, 2]
    assert model_from_function(module.colored).model_validate({"color": "red"}).model_dump()["color"] == {"red": 255}
    assert model_from_function(module.tagged).model_validate({"shape": {"kind": 2, "y": 1}}).model_dump()["shape"] == {
        "kind": 2,
        "y": 1,
    }


def test_a_literal_bound_still_moves_under_future_annotations(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "literal_bound",
        """
        from __future__ import annotations

        from pydantic import Field


        def tool(n: int = Field(..., ge=-3, le=5), label: str = Field("a", max_length=2)) -> str:
            return str(n)


        TOOLS = [tool]
        """,
    )
    fix_file(path)
    assert "def tool(n: Lenient[Annotated[int, Field(ge=-3, le=5)]] = Field(...)" in path.read_text()
    model = model_from_function(import_file(path, "literal_bound").tool)
    assert model.model_validate({"n": "-3"}).model_dump() == {"n": -3, "label": "a"}
    with pytest.raises(ValidationError):
        model.model_validate({"n": "6"})


def test_a_read_only_file_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "read_only", "def tool(n: int) -> str:\n    return str(n)\n\n\nTOOLS = [tool]\n")
    before = path.read_bytes()
    path.chmod(0o444)
    try:
        assert main(["fix", str(path)]) == 2
        captured = capsys.readouterr()
        assert captured.err.count("\n") == 1
        assert "read-only: fix does not rewrite it" in captured.err
        assert path.read_bytes() == before
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o444
        with pytest.raises(FixError):
            fix_file(path)
        assert "+def tool(n: LenientInt)" in fix_file(path, write=False).diff()  # --diff writes nothing
    finally:
        path.chmod(0o644)


ORIGINAL = """
from pydantic import Field


def tool(n: int = Field(..., ge=3), flag: bool = False) -> str:
    return str(n)


TOOLS = [tool]
"""


@pytest.mark.parametrize(
    ("rewritten", "expected"),
    [
        # What `Field(..., ge=LOW)` would have become with LOW bound again to 100.
        (
            ORIGINAL.replace("n: int = Field(..., ge=3)", "n: Annotated[int, Field(ge=100)] = Field(...)").replace(
                "from pydantic import Field", "from typing import Annotated\nfrom pydantic import Field"
            ),
            "tool.n: 3 is taken as written but not as rewritten",
        ),
        # A rewrite whose tool does not build.
        (
            "from __future__ import annotations\n" + ORIGINAL.replace("flag: bool = False", "flag: Undefined = 0"),
            "the rewritten module's tools do not build",
        ),
        (ORIGINAL.replace("TOOLS = [tool]", "TOOLS = []"), "tool: the rewritten module does not list this tool"),
        (ORIGINAL.replace("flag: bool = False", "flag: int = 0"), "tool.flag: true is taken as written"),
        (ORIGINAL.replace("flag: bool = False", "other: bool = False"), "tool.fields: the rewritten tool has other"),
        ("raise SystemExit(3)\n", "the rewritten module's tools do not build"),
    ],
)
def test_the_check_finds_a_rewrite_that_means_something_else(tmp_path: Path, rewritten: str, expected: str) -> None:
    original = _write(tmp_path, "checked", ORIGINAL)
    other = _write(tmp_path, "checked_rewritten", rewritten)
    found = problems(str(original), str(other))
    assert found
    assert expected in found[0]


def test_the_check_passes_a_faithful_rewrite(tmp_path: Path) -> None:
    original = _write(tmp_path, "faithful", ORIGINAL)
    rewritten = ORIGINAL.replace(
        "n: int = Field(..., ge=3), flag: bool = False",
        "n: Lenient[Annotated[int, Field(ge=3)]] = Field(...), flag: StrictBoolish = False",
    ).replace(
        "from pydantic import Field",
        "from typing import Annotated\nfrom pydantic import Field\nfrom pydantic_lenient import Lenient, StrictBoolish",
    )
    assert problems(str(original), str(_write(tmp_path, "faithful_rewritten", rewritten))) == []


def test_fix_does_not_write_a_rewrite_the_check_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, "guarded", ORIGINAL)
    before = path.read_bytes()
    real = fix_module._fix_module

    def bound_changed(module: Any, tools: Any, *, filename: str) -> Any:
        fixed, result = real(module, tools, filename=filename)
        return libcst.parse_module(fixed.code.replace("ge=3", "ge=100")), result

    monkeypatch.setattr(fix_module, "_fix_module", bound_changed)
    with pytest.raises(FixError) as raised:
        fix_file(path)
    assert "not written, the rewrite would change what it means: tool.n: 3 is taken" in str(raised.value)
    assert path.read_bytes() == before
