"""Importing a module file a test wrote, as `catalog` and `fix` import a user's file."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any


def import_file(path: Path, prefix: str) -> Any:
    """The module at ``path``, under a fresh name that starts with ``prefix``; its folder is on the
    path while it runs, as a script's folder would be."""
    name = f"{prefix}_{path.stem}_{os.urandom(4).hex()}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # where pydantic finds the names a postponed annotation uses
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module
