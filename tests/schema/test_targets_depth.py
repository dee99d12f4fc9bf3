"""Targets recurse as deep as plain pydantic does: a lenient model's schema, for every target, is
written for any nesting whose plain model's JSON schema pydantic can write."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, Optional

import pytest
from pydantic import BaseModel, create_model

from pydantic_lenient import lenient_model
from pydantic_lenient.schema.targets import TARGETS, input_schema, target_schema

WRAPPERS: dict[str, Callable[[Any], Any]] = {
    "model": lambda inner: inner,
    "list": lambda inner: list[inner],  # type: ignore[valid-type]
    "optional": lambda inner: Optional[inner],
}


def _nested(depth: int, wrap: Callable[[Any], Any]) -> type[BaseModel]:
    current = _level(0, {"value": (int, ...)})
    for level in range(1, depth):
        current = _level(level, {"child": (wrap(current), ...), "count": (int, ...)})
    return current


def _level(level: int, fields: dict[str, Any]) -> type[BaseModel]:
    model: type[BaseModel] = create_model(f"Level{level}", **fields)
    return model


def _plain_limit(wrap: Callable[[Any], Any]) -> int:
    """The deepest nesting whose plain model's JSON schema pydantic writes (at this recursion limit)."""
    depth = 10
    while depth < 400:
        try:
            _nested(depth + 1, wrap).model_json_schema()
        except RecursionError:
            return depth
        depth += 1
    return depth


def _refusal(build: Callable[[], object]) -> str | None:
    """The ``ValueError`` message ``build`` raises, or None when it succeeds."""
    try:
        build()
    except ValueError as error:
        return str(error)
    return None


@pytest.fixture
def default_recursion_limit() -> Iterator[None]:
    """Python's default limit, whatever an earlier test in the process left (hypothesis raises it):
    how deep plain pydantic reaches depends on it."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.usefixtures("default_recursion_limit")
@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_every_target_reaches_the_depth_plain_pydantic_reaches(wrapper: str) -> None:
    wrap = WRAPPERS[wrapper]
    depth = _plain_limit(wrap)
    assert depth >= 21
    limit = sys.getrecursionlimit()
    lenient = lenient_model(_nested(depth, wrap))
    for target in TARGETS:
        refusal = _refusal(lambda target=target: target_schema(lenient, target))  # type: ignore[misc]
        if refusal is None:
            assert target_schema(lenient, target).schema["type"] == "object", target
        else:
            # Gemini needs every $ref inlined: past 200 levels of inlined schema (docs/targets.md) it
            # is refused with this error, never a RecursionError. Python 3.12+ reaches that depth.
            assert (target, refusal) == ("gemini", "inlining the $refs nests the schema deeper than 200 levels")
    assert input_schema(lenient)["type"] == "object"
    assert sys.getrecursionlimit() == limit  # restored


def test_the_recursion_limit_is_restored_when_threads_overlap() -> None:
    limit = sys.getrecursionlimit()
    lenient = lenient_model(_nested(21, WRAPPERS["list"]))
    errors: list[BaseException] = []

    def build() -> None:
        try:
            for target in TARGETS:
                target_schema(lenient, target)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=build) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sys.getrecursionlimit() == limit
