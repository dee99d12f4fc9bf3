"""Tests of `pydantic_lenient.codemod` (``pydantic-lenient fix``)."""
