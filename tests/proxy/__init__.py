"""Tests of `pydantic_lenient.proxy`."""
