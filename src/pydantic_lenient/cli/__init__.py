"""The `pydantic-lenient` command line: thin handlers over the subsystems."""

from .main import CommandError, format_stats, main

__all__ = (
    "CommandError",
    "format_stats",
    "main",
)
