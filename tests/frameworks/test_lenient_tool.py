"""`lenient_tool` itself, with no framework: the wrapper validates and converts its own arguments
(so a framework that never validates, or a direct call, never hands the function raw text), keeps
the signature frameworks read, and leaves a framework's own parameters exactly as written.

The calls here pass what models send (``"5"`` for an ``int``): mypy's arg-type check is off for
this module (pyproject.toml)."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from typing import Annotated, Any, Generic, Optional, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, conint
from typing_extensions import Doc, TypedDict

from pydantic_lenient import LenientInt, StrictBoolish, lenient_model, lenient_tool
from pydantic_lenient.types.tools import lenient_arguments, written_by_the_model
from tests.frameworks import table

T = TypeVar("T")


class Session:
    """An arbitrary class, as a framework's context is."""


@dataclasses.dataclass
class RunState(Generic[T]):
    """A framework's run context: it holds the program's dependencies, of any type."""

    dependencies: T
    step: int = 0


class Config(TypedDict, total=False):
    """A framework's configuration: callbacks of any type."""

    callbacks: Any
    recursion_limit: int


class InjectedMarker:
    """A framework's marker, read from ``Annotated`` by the framework, ignored by pydantic."""

    def __repr__(self) -> str:  # a test id without an address: the same in every xdist worker
        return "InjectedMarker()"


@dataclasses.dataclass(frozen=True)
class Point:
    """A point on the map."""

    x: int
    y: int


class Filters(BaseModel):
    """What to search for."""

    unread_only: bool = Field(False, description="Only unread messages")
    limit: int = 10


@pytest.mark.parametrize(
    "annotation",
    [
        int,
        list[int],
        Optional[int],
        Filters,
        Point,
        Annotated[int, Field(ge=1)],
        Annotated[int, "a limit"],
        Annotated[int, Doc("a limit")],
        dict[str, Any],
        conint(multiple_of=2),
    ],
    ids=str,
)
def test_the_model_s_parameters(annotation: Any) -> None:
    assert written_by_the_model(annotation)


@pytest.mark.parametrize(
    "annotation",
    [
        Session,
        RunState[None],
        RunState,
        Config,
        Annotated[str, InjectedMarker],
        Annotated[dict[str, Any], InjectedMarker()],
        Optional[Session],
        "Undefined",
    ],
    ids=str,
)
def test_a_framework_s_parameters(annotation: Any) -> None:
    assert not written_by_the_model(annotation)


def with_context(session: Session, state: RunState[None], config: Config, limit: int, dry_run: bool = True) -> Any:
    return session, state, config, limit, dry_run


def test_a_framework_s_parameters_are_left_as_written_and_passed_through() -> None:
    decorated = lenient_tool(with_context)
    parameters = inspect.signature(decorated).parameters
    assert parameters["session"].annotation is Session
    assert parameters["state"].annotation == RunState[None]
    assert parameters["config"].annotation is Config
    assert parameters["limit"].annotation is LenientInt
    session, state, config = Session(), RunState(dependencies=None), Config(callbacks=object())
    assert decorated(session, state, config, "5", dry_run="false") == (session, state, config, 5, False)
    got = decorated(session, state, config, 5)
    assert got[0] is session
    assert got[1] is state
    assert got[2] is config


def test_a_direct_call_gets_converted_values_or_one_error_naming_every_bad_argument() -> None:
    decorated = lenient_tool(table.move_messages)
    table.forget()
    decorated('["1", 2]', dry_run="FALSE")
    assert table.same_values(table.last_received(), {"uids": [1, 2], "dry_run": False})
    table.forget()
    with pytest.raises(ValidationError) as raised:
        decorated(["x"], dry_run="no")
    assert {error["loc"][0] for error in raised.value.errors()} == {"uids", "dry_run"}
    assert raised.value.title == "move_messages"
    assert table.last_received() is None  # the function never ran


def test_async_functions_validate_before_they_run() -> None:
    decorated = lenient_tool(table.fetch_message)
    assert inspect.iscoroutinefunction(decorated)
    table.forget()
    asyncio.run(decorated("42", headers_only="true"))
    assert table.same_values(table.last_received(), {"uid": 42, "headers_only": True})
    table.forget()
    with pytest.raises(ValidationError):
        asyncio.run(decorated("4x2"))
    assert table.last_received() is None


class Mailbox:
    def __init__(self, name: str) -> None:
        self.name = name

    @lenient_tool
    def search(self, limit: int, unread_only: bool = False) -> tuple[str, int, bool]:
        return self.name, limit, unread_only

    @classmethod
    @lenient_tool
    def opened(cls, limit: int) -> tuple[str, int]:
        return cls.__name__, limit

    @staticmethod
    @lenient_tool
    def count(limit: int) -> int:
        return limit

    @lenient_tool
    @staticmethod
    def decorated_outside(limit: int) -> int:
        return limit


def test_methods_class_methods_and_static_methods() -> None:
    mailbox = Mailbox("inbox")
    assert mailbox.search("3", unread_only="true") == ("inbox", 3, True)
    assert list(inspect.signature(mailbox.search).parameters) == ["limit", "unread_only"]
    assert Mailbox.opened("4") == ("Mailbox", 4)
    assert Mailbox.count("5") == 5
    assert Mailbox.decorated_outside("6") == 6
    with pytest.raises(ValidationError):
        mailbox.search("three")


def test_star_args_and_star_star_kwargs() -> None:
    @lenient_tool
    def tag(label: str, *uids: int, **flags: bool) -> tuple[str, tuple[int, ...], dict[str, bool]]:
        return label, uids, flags

    assert tag("x", "1", 2, urgent="false", seen=True) == ("x", (1, 2), {"urgent": False, "seen": True})
    parameters = inspect.signature(tag).parameters
    assert parameters["uids"].annotation is LenientInt
    assert parameters["flags"].annotation is StrictBoolish
    with pytest.raises(ValidationError):
        tag("x", "one")
    with pytest.raises(ValidationError):
        tag("x", urgent="yes")


def test_a_field_default_is_applied_as_pydantic_applies_it() -> None:
    @lenient_tool
    def page(size: int = Field(10, ge=1, le=100)) -> int:
        return size

    assert page() == 10
    assert page("50") == 50
    with pytest.raises(ValidationError):
        page("0")
    size: Any = inspect.signature(page).parameters["size"].annotation
    assert TypeAdapter(size).json_schema()["anyOf"][0]["maximum"] == 100


def test_a_frozen_dataclass_stays_frozen() -> None:
    @lenient_tool
    def go(to: Point, speed: int = 1) -> Point:
        return to

    point = go('{"x": "1", "y": 2}')
    assert isinstance(point, Point)
    assert (point.x, point.y) == (1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 5  # type: ignore[misc]
    moved = go(Point(3, 4))  # an instance of the original class, in a direct call
    assert isinstance(moved, Point)
    assert (moved.x, moved.y) == (3, 4)


def test_a_model_parameter_takes_an_instance_of_the_original_or_a_dict() -> None:
    for decorated in (lenient_tool(book_beside), lenient_tool(table.book_meeting)):
        for sent in (table.MeetingRequest(title="Review", minutes=30), {"title": "Review", "minutes": "30"}):
            table.forget()
            received = decorated(sent)
            if isinstance(received, str):  # table.book_meeting records what it received
                received = table.last_received()["request"]  # type: ignore[index]
            assert isinstance(received, table.MeetingRequest)
            assert received.minutes == 30


class Slot(TypedDict):
    start: int
    remote: bool


def book_alone(ctx: Session, request: table.MeetingRequest) -> Any:
    return request


def go_alone(to: Point) -> Any:
    return to


def reserve_alone(slot: Slot) -> Any:
    return slot


def book_beside(request: table.MeetingRequest, notify: bool = False) -> Any:
    return request


@pytest.mark.parametrize(
    ("function", "fields", "converted", "refused"),
    [
        (
            book_alone,
            {"title": "Review", "minutes": "100", "remote": "false"},
            {"title": "Review", "minutes": 100, "remote": False},
            {"title": "Review", "minutes": "100", "remote": "yes"},
        ),
        (go_alone, {"x": "100", "y": 2}, {"x": 100, "y": 2}, {"x": "100", "y": "yes"}),
        (
            reserve_alone,
            {"start": "100", "remote": "false"},
            {"start": 100, "remote": False},
            {"start": 1, "remote": "yes"},
        ),
    ],
    ids=["model", "dataclass", "typeddict"],
)
def test_a_model_that_stands_for_all_the_arguments_stays_a_class(
    function: Any, fields: dict[str, Any], converted: dict[str, Any], refused: dict[str, Any]
) -> None:
    """With ``keep_model_class=True``, a tool's only model-written parameter, annotated with a model
    class, keeps a class annotation (the lenient class), as frameworks that advertise its fields as
    the tool's own (pydantic-ai) recognise it. Its arguments are an object there, so it takes no
    JSON text, and the wrapper validates what the signature says."""
    name = [*inspect.signature(function).parameters][-1]
    model = inspect.get_annotations(function, eval_str=True)[name]
    decorated = lenient_tool(function, keep_model_class=True)
    assert inspect.signature(decorated).parameters[name].annotation is lenient_model(model) is not model
    assert decorated.__annotations__[name] is lenient_model(model)
    assert TypeAdapter(lenient_model(model)).json_schema()["type"] == "object"
    arguments = (Session(),) if function is book_alone else ()
    received = decorated(*arguments, fields)
    values = (
        received
        if isinstance(received, dict)
        else received.model_dump()
        if isinstance(received, BaseModel)
        else vars(received)
    )
    assert values == converted
    assert all(type(values[key]) is type(value) for key, value in converted.items())
    with pytest.raises(ValidationError):
        decorated(*arguments, refused)
    with pytest.raises(ValidationError):  # as advertised: the arguments are an object
        decorated(*arguments, TypeAdapter(model).dump_json(TypeAdapter(model).validate_python(converted)).decode())


def test_by_default_a_sole_model_takes_its_json_text_too() -> None:
    decorated = lenient_tool(table.book_meeting)
    assert decorated('{"title": "Review", "minutes": "45"}') is not None
    assert table.last_received()["request"].minutes == 45  # type: ignore[index]


def test_a_model_beside_other_arguments_also_takes_its_json_text() -> None:
    annotation = inspect.signature(lenient_tool(book_beside)).parameters["request"].annotation
    assert annotation is not lenient_model(table.MeetingRequest)
    received = lenient_tool(book_beside)('{"title": "Review", "minutes": "45"}')
    assert isinstance(received, table.MeetingRequest)
    assert received.minutes == 45


def test_descriptions_are_kept() -> None:
    for original in (Filters, Point, Config):
        assert lenient_model(original).__doc__ == original.__doc__
    assert TypeAdapter(lenient_model(Filters)).json_schema()["description"] == "What to search for."
    schema = TypeAdapter(lenient_model(Filters)).json_schema()
    assert schema["properties"]["unread_only"]["description"] == "Only unread messages"


def test_lenient_arguments_validates_as_the_call_does() -> None:
    decorated = lenient_tool(table.search_mail)
    assert lenient_arguments(decorated, {"folder": "Dev", "limit": "7"}) == {"folder": "Dev", "limit": 7}
    with pytest.raises(ValidationError):
        lenient_arguments(decorated, {"folder": "Dev", "limit": "seven"})
    with pytest.raises(TypeError):
        lenient_arguments(table.search_mail, {})


def flag(value: bool) -> Any:
    return value


@given(st.one_of(st.booleans(), st.text(), st.integers(), st.none(), st.floats(), st.lists(st.booleans())))
def test_the_function_never_receives_anything_but_the_lenient_verdict(value: Any) -> None:
    """For every value: the function gets exactly what the lenient type makes of it, or never runs."""
    decorated = lenient_tool(flag)
    try:
        expected = TypeAdapter(StrictBoolish).validate_python(value)
    except ValidationError:
        with pytest.raises(ValidationError):
            decorated(value)
    else:
        assert decorated(value) is expected


@given(st.sampled_from(["false", "FALSE", "False", "fAlSe"]))
def test_false_never_becomes_true(text: str) -> None:
    assert lenient_tool(flag)(text) is False
