from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pydantic_lenient.cli.main import main
from pydantic_lenient.schema.audit import audit
from pydantic_lenient.schema.catalog import model_from_function
from pydantic_lenient.schema.loading import load_target
from pydantic_lenient.schema.targets import input_schema
from pydantic_lenient.testing import host_validator

pytest.importorskip("libcst")  # the codemod extra; in test, so CI has it

from pydantic_lenient.codemod.fix import fix_file
from tests.imported import import_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


def _import(path: Path) -> Any:
    return import_file(path, "fixed")


# Calls as models send them, and what the legacy tools' hosts and server make of them.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"folder": "Dev", "limit": "100"}),
    ("search", {"folder": "Dev", "limit": 100, "offset": "20"}),
    ("fetch_message", {"uid": "17", "max_body_bytes": None}),
    ("move_messages", {"uids": "[17, 18]", "destination": "Archive", "dry_run": "false"}),
    ("move_messages", {"uids": ["17"], "destination": "Archive", "dry_run": "FALSE"}),
]
NATIVE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"folder": "Dev", "limit": 100, "offset": 20}),
    ("fetch_message", {"uid": 17}),
    ("move_messages", {"uids": [17, 18], "destination": "Archive", "dry_run": False}),
]
REFUSED_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"folder": "Dev", "limit": "1.5"}),
    ("move_messages", {"uids": "[17", "destination": "Archive"}),
    ("move_messages", {"uids": [17], "destination": "Archive", "dry_run": "no"}),
]


def _verdicts(module: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, bool]]:
    """(host accepts, server accepts) for each call."""
    verdicts = []
    for name, arguments in calls:
        model = model_from_function(getattr(module, name))
        host = bool(host_validator(input_schema(model)).is_valid(arguments))
        try:
            model.model_validate(arguments)
            server = True
        except ValueError:
            server = False
        verdicts.append((host, server))
    return verdicts


def test_fix_makes_the_legacy_example_pass_the_audit_and_take_what_models_send(tmp_path: Path) -> None:
    path = tmp_path / "legacy_tools.py"
    shutil.copy(EXAMPLES / "legacy_tools.py", path)
    before = _import(path)
    assert sum(finding.level == "error" for finding in audit(load_target(str(path)))) == 6
    assert _verdicts(before, CALLS) == [(False, True), (False, True), (False, True), (False, False), (False, True)]
    native_results = [getattr(before, name)(**arguments) for name, arguments in NATIVE_CALLS]

    result = fix_file(path)

    assert len(result.changes) == 6
    assert audit(load_target(str(path))) == []
    assert main(["catalog", str(path), "--check", "--output", str(tmp_path / "catalog.json")]) == 0
    after = _import(path)
    # The portable style (the default) keeps an array's items canonical (the Gemini API refuses a union
    # items): a host refuses ["17"] for list[int], and the server still takes it.
    assert _verdicts(after, CALLS) == [(True, True)] * 4 + [(False, True)]
    assert _verdicts(after, NATIVE_CALLS) == [(True, True)] * len(NATIVE_CALLS)
    # Hosts do not check JSON text's content (the README's listed exception 4); the server refuses it.
    assert _verdicts(after, REFUSED_CALLS) == [(False, False), (True, False), (False, False)]
    assert [getattr(after, name)(**arguments) for name, arguments in NATIVE_CALLS] == native_results
    move = model_from_function(after.move_messages).model_validate(CALLS[3][1])
    assert (move.uids, move.dry_run) == ([17, 18], False)  # type: ignore[attr-defined]


def test_formatting_comments_and_field_arguments_are_kept(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "formatted",
        '''
        from typing import Annotated, Optional, Union

        from pydantic import Field


        def search(
            folder: str,  # the folder to search
            limit: Annotated[int, Field(ge=1,   le=500, description="Most to return")] = 50,  # bounded
            page: Optional[int] = None,
            described: Annotated[Optional[int], Field(description="A page")] = None,
            ratio: float | None = None,
            either: Union[int, str] = 1,
            flags: dict[str, list[bool]] = {},
        ) -> None:
            """Search."""


        TOOLS = [search]
        ''',
    )
    fix_file(path)
    assert (
        path.read_text()
        == textwrap.dedent(
            '''
        from typing import Annotated, Optional, Union

        from pydantic import Field
        from pydantic_lenient import ExactNumber, Lenient, LenientJson, StrictBoolish


        def search(
            folder: str,  # the folder to search
            limit: Lenient[Annotated[int, Field(ge=1,   le=500, description="Most to return")]] = 50,  # bounded
            page: Lenient[Optional[int]] = None,
            described: Lenient[Annotated[Optional[int], Field(description="A page")]] = None,
            ratio: Lenient[float | None] = None,
            either: Union[Annotated[int, ExactNumber()], str] = 1,
            flags: LenientJson[dict[str, LenientJson[list[StrictBoolish]]]] = {},
        ) -> None:
            """Search."""


        TOOLS = [search]
        '''
        ).lstrip()
    )
    assert fix_file(path).changes == []  # a second run changes nothing


def test_models_and_constrained_types_are_rewritten(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "models",
        """
        from pydantic import BaseModel, conint


        class Step(BaseModel):
            count: int


        class Plan(BaseModel):
            steps: list[Step]
            retries: conint(strict=True, ge=1, le=5) = 1  # type: ignore[valid-type]
            size: conint(ge=0) = 0  # type: ignore[valid-type]


        TOOLS = [("plan", Plan)]
        """,
    )
    fix_file(path)
    fixed = path.read_text()
    assert "    steps: LenientJson[list[Lenient[Step]]]\n" in fixed
    # Bounds ride in the marker (natively checked): the conint as written, inside Lenient[...].
    assert "    retries: Lenient[conint(strict=True, ge=1, le=5)] = 1  # type: ignore[valid-type]\n" in fixed
    assert "    size: LenientUInt = 0" in fixed
    assert "    count: int\n" in fixed  # Step is not a tool itself; Lenient[Step] makes it lenient where used
    assert "from pydantic_lenient import Lenient, LenientJson, LenientUInt\n" in fixed
    assert audit(load_target(str(path))) == []
    plan = _import(path).Plan.model_validate({"steps": '[{"count": "2"}]', "retries": "3", "size": "7"})
    assert (plan.steps[0].count, plan.retries, plan.size) == (2, 3, 7)


def test_a_validator_the_rendering_cannot_write_keeps_the_annotation_inside_lenient(tmp_path: Path) -> None:
    """A validator's function has no source form: the annotation as written goes inside
    ``Lenient[...]`` (the same at run time), and the rest of the file is still fixed."""
    path = _write(
        tmp_path,
        "validated",
        """
        from typing import Annotated, Optional

        from pydantic import AfterValidator, Field

        seen: list[object] = []


        def noted(value: object) -> object:
            seen.append(value)
            return value


        def search(
            limit: Annotated[int, Field(ge=1), AfterValidator(noted)] = 10,
            after: Optional[Annotated[int, AfterValidator(noted)]] = None,
            page: int = 1,
        ) -> None:
            pass


        TOOLS = [search]
        """,
    )
    result = fix_file(path)
    fixed = path.read_text()
    assert "    limit: Lenient[Annotated[int, Field(ge=1), AfterValidator(noted)]] = 10,\n" in fixed
    assert "    after: Lenient[Optional[Annotated[int, AfterValidator(noted)]]] = None,\n" in fixed
    assert "    page: LenientInt = 1,\n" in fixed
    assert len(result.changes) == 3
    assert fix_file(path).changes == []  # idempotent
    module = _import(path)
    model = model_from_function(module.search)
    assert model.model_validate({"limit": "5", "after": "null", "page": "2"}).model_dump() == {
        "limit": 5,
        "after": None,
        "page": 2,
    }
    assert module.seen == [5]  # the validator still runs, on the converted value
    for refused in ({"limit": "0"}, {"limit": 0}, {"limit": True}, {"after": "1.5"}):
        with pytest.raises(ValueError):
            model.model_validate(refused)
    assert audit(load_target(str(path))) == []


def test_diff_prints_the_change_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "legacy_tools.py"
    shutil.copy(EXAMPLES / "legacy_tools.py", path)
    original = path.read_text()
    assert main(["fix", str(path), "--diff"]) == 0
    assert path.read_text() == original
    printed = capsys.readouterr().out
    assert "-def fetch_message(uid: int, max_body_bytes: Optional[int] = None)" in printed
    assert "+def fetch_message(uid: LenientInt, max_body_bytes: Lenient[Optional[int]] = None)" in printed


def test_fix_reports_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fix", str(tmp_path / "missing.py")]) == 2
    broken = _write(tmp_path, "broken", "def tool(x: int) -> None:\n    pass\nTOOLS = [tool]\nraise SystemExit(3)\n")
    assert main(["fix", str(broken)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2
    assert errors[0].startswith("pydantic-lenient: error: no such file")
    assert errors[1].startswith("pydantic-lenient: error: cannot import")
