"""Tests of `pydantic_lenient.repair`, and of the repair benchmark."""
