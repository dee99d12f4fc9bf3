"""`pydantic-lenient fix`: rewrite a module's tool annotations into their lenient forms, in place."""

from .fix import FixError, FixResult, fix_file, fix_source

__all__ = (
    "FixError",
    "FixResult",
    "fix_file",
    "fix_source",
)
