"""A hang guard for tests of hostile input: a verdict, never a timing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")
HANG_GUARD_SECONDS = 60


def within_guard(function: Callable[[], T]) -> T:
    """``function()``, failing the test if it has not returned after `HANG_GUARD_SECONDS`."""
    outcome: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(function())
        except BaseException as error:  # re-raised in the test's thread
            errors.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(HANG_GUARD_SECONDS)
    if worker.is_alive():
        pytest.fail(f"still running after {HANG_GUARD_SECONDS} s")
    if errors:
        raise errors[0]
    return outcome[0]
