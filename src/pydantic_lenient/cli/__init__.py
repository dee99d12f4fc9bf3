"""The `pydantic-lenient` command line: thin handlers over the subsystems.

`main` holds the parser and the error handling, `commands` one handler per command.
"""

from ._io import CommandError
from .commands import format_stats
from .main import main

__all__ = (
    "CommandError",
    "format_stats",
    "main",
)
