"""Tests of `pydantic_lenient.cli`, the command line."""
