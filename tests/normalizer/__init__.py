"""Tests of `pydantic_lenient.normalizer`."""
