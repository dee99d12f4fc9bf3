from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from decimal import Decimal
from typing import Any

import pytest

import pydantic_lenient
from tests.sdks import require, require_framework


def _isort_style(name: str) -> tuple[int, list[tuple[int, str]]]:
    """ruff's RUF022 order: CONSTANTS, then CamelCase, then the rest; digit runs compare as numbers."""
    group = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    parts = re.split("([0-9]+)", name)
    return group, [(int(part), "") if part[:1] in "0123456789" and part else (-1, part) for part in parts]


def test_all_is_sorted() -> None:
    names = list(pydantic_lenient.__all__)
    assert names == sorted(names, key=_isort_style)


def test_all_lists_every_public_name() -> None:
    for name in pydantic_lenient.__all__:
        getattr(pydantic_lenient, name)  # the root loads its names on first use
    public = {
        name
        for name, value in vars(pydantic_lenient).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert public == set(pydantic_lenient.__all__)


def test_dir_lists_every_public_name_before_it_loads() -> None:
    assert set(pydantic_lenient.__all__) <= set(dir(pydantic_lenient))
    with pytest.raises(AttributeError, match="no attribute 'LenientIntt'"):
        getattr(pydantic_lenient, "LenientIntt")  # noqa: B009


def _modules_loaded_by(statement: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``statement``."""
    completed = subprocess.run(
        [sys.executable, "-c", f"{statement}; import sys; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(completed.stdout.split())


def test_nothing_heavy_is_imported_before_it_is_used() -> None:
    """`bench_import.py` measures the cost; this says what is left out until a name needs it."""
    heavy = {"asyncio", "concurrent.futures", "pydantic.main", "pydantic_lenient.normalizer", "pydantic_lenient.schema"}
    assert not _modules_loaded_by("import pydantic_lenient") & heavy
    types_only = _modules_loaded_by("from pydantic_lenient import LenientInt, LenientJson, StrictBoolish")
    assert not types_only & {"asyncio", "concurrent.futures", "pydantic_lenient.normalizer", "pydantic_lenient.schema"}
    # Building a TypeAdapter at import would load pydantic's plugin machinery (importlib.metadata).
    everything = _modules_loaded_by("from pydantic_lenient import *")
    assert not everything & {"asyncio", "concurrent.futures", "pydantic.plugin._loader"}


def test_the_proxy_starts_its_upstream_before_it_loads_pydantic() -> None:
    """The command line and `serve` start a child upstream with only the standard library loaded;
    pydantic, the validators and the relay load while the upstream starts (benchmarks/bench_proxy.py)."""
    loaded = _modules_loaded_by(
        "import pydantic_lenient.cli.main, pydantic_lenient.proxy.stdio, pydantic_lenient.proxy.child"
    )
    heavy = {"pydantic", "pydantic_core", "jsonschema_rs", "pydantic_lenient.proxy.relay"}
    assert not loaded & heavy


def test_the_relay_widens_a_listing_without_loading_pydantic() -> None:
    """A remote upstream has no start of its own to overlap: the relay, up to its first widened
    ``tools/list`` answer, loads pydantic-core (the JSON parser) but not pydantic."""
    statement = "; ".join(
        (
            "import json",
            "from pydantic_lenient.proxy.relay import _Relay",
            "relay = _Relay('type-array', None, None)",
            "relay.from_client(json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list'}).encode() + b'\\n')",
            "tool = {'name': 't', 'inputSchema': {'type': 'object', 'properties': {'n': {'type': 'integer'}}}}",
            "line = json.dumps({'jsonrpc': '2.0', 'id': 1, 'result': {'tools': [tool]}}).encode() + b'\\n'",
            "assert b'pattern' in relay.from_upstream(line).client",
        )
    )
    loaded = _modules_loaded_by(statement)
    assert "pydantic_core" in loaded
    assert not {name for name in loaded if name == "pydantic" or name.startswith("pydantic.")}


# Modules that need an optional extra, and the package that extra brings.
NEEDS_EXTRA = {
    "adapters.mcp": "mcp",
    "adapters.fastmcp": "fastmcp",
    "proxy": "jsonschema_rs",
    "proxy.calls": "jsonschema_rs",
    "proxy.messages": "jsonschema_rs",
    "proxy.relay": "jsonschema_rs",
    "proxy.session": "jsonschema_rs",
    "proxy.stdio": "jsonschema_rs",
    "proxy.core": "jsonschema_rs",
    "proxy.child": "jsonschema_rs",
    "proxy.upstream": "jsonschema_rs",
    "proxy.transports": "jsonschema_rs",
    "proxy.streams": "jsonschema_rs",
    "proxy.remote": "httpx2",
    "observe.otel": "opentelemetry",
    "repair": "jsonschema_rs",
    "repair.budget": "jsonschema_rs",
    "repair.coercions": "jsonschema_rs",
    "repair.engine": "jsonschema_rs",
    "repair.reader": "jsonschema_rs",
    "repair.scopes": "jsonschema_rs",
    "repair.validation": "jsonschema_rs",
    "repair.walk": "jsonschema_rs",
    "adapters.clients": "jsonschema_rs",
    "codemod": "libcst",
    "codemod.fix": "libcst",
    "adapters.pydantic_ai": "pydantic_ai",
    "adapters.openai_agents": "agents",
    "adapters.langchain": "langchain_core",
    "proxy.http_answers": "httpx2",
    "proxy.http_logs": "httpx2",
    "gateway": "starlette",
    "gateway.aggregate": "starlette",
    "gateway.app": "starlette",
    "gateway.client_lanes": "starlette",
    "gateway.config": "starlette",
    "gateway.eras": "starlette",
    "gateway.event_stream": "starlette",
    "gateway.lanes": "starlette",
    "gateway.security": "starlette",
    "gateway.sessions": "starlette",
}
# Modules for a framework `[test]` leaves out (the `frameworks` extra): tests/sdks.py, `require_framework`.
NEEDS_FRAMEWORK = {"adapters.google_adk": "google.adk", "adapters.llama_index": "llama_index.core"}

# Every public module at any depth (subpackages included), named from the package; `adapters` and
# `types` export nothing themselves (the SDKs are optional; the root exports the types).
PUBLIC_MODULES = sorted(
    info.name.removeprefix("pydantic_lenient.")
    for info in pkgutil.walk_packages(pydantic_lenient.__path__, "pydantic_lenient.")
    if not any(part.startswith("_") for part in info.name.split("."))
    and info.name.removeprefix("pydantic_lenient.") not in {"testing", "pytest_plugin", "adapters", "types"}
)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_module_has_a_complete_all(name: str) -> None:
    if name in NEEDS_EXTRA:
        require(NEEDS_EXTRA[name])
    if name in NEEDS_FRAMEWORK:
        require_framework(NEEDS_FRAMEWORK[name])
    module = importlib.import_module(f"pydantic_lenient.{name}")
    exported = set(getattr(module, "__all__", ()))
    assert exported, f"{module.__name__} has no __all__"
    # A package may load its names on first use (PEP 562): each must still be there when asked for.
    missing = {name for name in exported if getattr(module, name, None) is None}
    assert not missing, module.__name__
    assert exported <= set(dir(module)), module.__name__


def test_lenient_aliases_are_annotated_builtins() -> None:
    """Type checkers see the builtin: each alias is Annotated over int, float, bool, T or str."""
    scalars = [name for name in pydantic_lenient.__all__ if name.startswith(("LenientI", "LenientU", "LenientP"))]
    assert len(scalars) == 11
    for name in [*scalars, "LenientFloat", "StrictBoolish", "LenientDecimal"]:
        assert getattr(pydantic_lenient, name).__origin__ in (int, float, bool, Decimal), name
    lenient_json: Any = pydantic_lenient.LenientJson  # a class at run time, an alias for type checkers
    json_text: Any = pydantic_lenient.JsonText
    assert lenient_json[list[int]].__origin__ == list[int]
    assert json_text[list[int]].__origin__ is str
