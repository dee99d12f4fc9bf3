"""Loading a target: the tools a module, a ``module:attr`` or a ``path/to/file.py[:attr]`` names.

Loading imports the target, so its module-level code runs, as ``python path/to/file.py`` would
(`pydantic-lenient catalog` does it in a child process, so that code cannot end the command).
`pydantic-lenient catalog` and `pydantic-lenient fix` both find their tools here, and both run
the import in a child with `run_isolated`: the child writes its result to a file, so that a helper
process the target starts (a daemon, a fork) cannot keep the command waiting on a pipe it inherited.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from .catalog import is_fastmcp_server, is_official_sdk_server

__all__ = ("IMPORT_TIMEOUT", "Isolated", "TargetError", "load_target", "run_isolated")

IMPORT_TIMEOUT = 120.0
"""Seconds a child importing a target may take before it is ended, with every process it started."""

# Module-level names that conventionally hold a module's tools, in the order they are looked for:
# a list of tools first, then (if the module defines no server object) a server's usual names.
_TOOL_LIST_NAMES = ("TOOLS", "tools")
_SERVER_NAMES = ("mcp", "server", "app")
_TOOL_NAMES = _TOOL_LIST_NAMES + _SERVER_NAMES


class TargetError(Exception):
    """A target that cannot be loaded, or that names no tools, in one line."""


class Isolated(NamedTuple):
    """How a `run_isolated` child ended: its exit code (negative: the signal; None: it did not end in
    time and was killed), and what it wrote to stdout and stderr, together."""

    returncode: int | None
    output: bytes


def run_isolated(module: str, arguments: list[str], timeout: float | None = None) -> Isolated:
    """Runs ``python -m module arguments...`` (with this process's ``sys.path``) in a process group of
    its own, its stdin empty and its stdout and stderr into a temporary file, never a pipe: when it
    ends, or after ``timeout`` seconds, the whole group is killed, daemons and forks included, and
    nothing waits for an end of file that a helper holding the pipe would keep from coming.
    ``timeout`` defaults to `IMPORT_TIMEOUT`."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
    with tempfile.TemporaryFile() as output:
        child = subprocess.Popen(
            [sys.executable, "-m", module, *arguments],
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=hasattr(os, "killpg"),
        )
        try:
            returncode: int | None = child.wait(IMPORT_TIMEOUT if timeout is None else timeout)
        except subprocess.TimeoutExpired:
            returncode = None
        finally:
            _end_group(child)
        output.seek(0)
        return Isolated(returncode, output.read())


def _end_group(child: subprocess.Popen[bytes]) -> None:
    """Kills ``child`` and whatever is left of its process group (a POSIX session of its own)."""
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the group has ended
            os.killpg(child.pid, signal.SIGKILL)
    child.kill()
    child.wait()


def load_target(target: str) -> Any:
    """Import ``module``, ``module:attr`` or ``path/to/file.py[:attr]`` and return its tools.

    Without ``attr``, the module's ``TOOLS`` (or ``tools``) is used, else the one MCP server object
    it defines, else its ``mcp``, ``server`` or ``app``. Several server objects need ``:attr``.
    """
    location, _, attribute = target.partition(":") if not _is_windows_path(target) else (target, "", "")
    module = _import(location)
    if attribute:
        value: Any = module
        for part in attribute.split("."):
            if not hasattr(value, part):
                raise TargetError(f"{location} has no attribute {attribute!r}")
            value = getattr(value, part)
        return value
    for name in _TOOL_LIST_NAMES:
        if hasattr(module, name):
            return getattr(module, name)
    servers: dict[int, list[str]] = {}  # each server object once, under all the names it has
    for name, value in vars(module).items():
        if _looks_like_server(value):
            servers.setdefault(id(value), []).append(name)
    if len(servers) == 1:
        return getattr(module, next(iter(servers.values()))[0])
    if servers:
        names = sorted(names[0] for names in servers.values())
        raise TargetError(
            f"{location} defines {len(names)} server objects ({', '.join(names)}): pick one with {location}:{names[0]}"
        )
    for name in _SERVER_NAMES:
        if not isinstance(getattr(module, name, None), (ModuleType, type(None))):  # not `import mcp`
            return getattr(module, name)
    raise TargetError(
        f"nothing tool-like found in {location}: name the tools with {location}:ATTR, "
        f"or define one of {', '.join(_TOOL_NAMES)}"
    )


def _is_windows_path(target: str) -> bool:
    return len(target) > 2 and target[1] == ":" and target[2] in "\\/"


def _looks_like_server(value: Any) -> bool:
    return not isinstance(value, type) and (is_official_sdk_server(value) or is_fastmcp_server(value))


def _import(location: str) -> Any:
    path = Path(location)
    try:
        if path.is_dir():
            files = sorted(str(file) for file in path.glob("*.py"))
            hint = f", e.g. {files[0]}" if files else ""
            raise TargetError(f"{location} is a folder: name a Python file in it{hint}, or a module")
        if location.endswith(".py") or path.is_file():
            if not path.is_file():
                raise TargetError(f"no such file: {location}")
            if path.suffix != ".py":
                raise TargetError(f"{location} is not a Python file: TARGET is module[:attr] or file.py[:attr]")
            # Let the file import the modules beside it, as `python path/to/file.py` would.
            sys.path.insert(0, str(path.resolve().parent))
            spec = importlib.util.spec_from_file_location(f"_pydantic_lenient_target_{path.stem}", path)
            if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a loader
                raise TargetError(f"cannot import {location}: no loader for this file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            # As `python path/to/file.py` would, leave no __pycache__ beside the file.
            writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
            try:
                spec.loader.exec_module(module)
            finally:
                sys.dont_write_bytecode = writes_bytecode
            return module
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(location)
    except TargetError:
        raise
    except (Exception, SystemExit, KeyboardInterrupt) as error:  # anything the target's code raises importing
        raise TargetError(f"cannot import {location}: {type(error).__name__}: {error}") from None
