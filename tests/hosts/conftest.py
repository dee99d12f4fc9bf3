"""The hosts' own code from npm (tests/hosts/node), behind one fixture.

It installs with ``npm install`` (the lockfile pins every version), not ``npm ci``: npm leaves the
platform packages of one of Qwen Code's optional dependencies out of the lockfile, and ``npm ci``
then refuses it as out of sync.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import External, node_runner, require_external

NODE_DIR = Path(__file__).parent / "node"
HostCodeRunner = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]

HOST_CODE = External(
    "host_code",
    "PYDANTIC_LENIENT_REQUIRE_HOSTS",
    "the hosts' code is not installed: run `npm install --prefix tests/hosts/node --ignore-scripts` (needs node)",
    lambda: (
        shutil.which("node") is not None
        and (NODE_DIR / "node_modules" / "@google" / "gemini-cli-core").is_dir()
        and (NODE_DIR / "node_modules" / "@qwen-code" / "qwen-code").is_dir()
    ),
)


@pytest.fixture(scope="session")
def host_code() -> HostCodeRunner:
    """Run Gemini CLI's, Qwen Code's and VS Code's own code over {host, schema, calls} cases.

    Skipped without node or tests/hosts/node/node_modules, unless PYDANTIC_LENIENT_REQUIRE_HOSTS is
    set (CI sets it), in which case the test fails instead.
    """
    require_external(HOST_CODE)
    return node_runner(NODE_DIR / "driver.mjs")
