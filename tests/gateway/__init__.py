"""Tests of `pydantic_lenient.gateway`."""
