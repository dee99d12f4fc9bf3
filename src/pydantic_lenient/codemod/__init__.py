"""`pydantic-lenient fix`: rewrite a module's tool annotations into their lenient forms, in place."""

from .fix import FixResult, fix_file, fix_source

__all__ = (
    "FixResult",
    "fix_file",
    "fix_source",
)
