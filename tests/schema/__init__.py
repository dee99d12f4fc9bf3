"""Tests of `pydantic_lenient.schema`: styles, targets, widening, the catalog and the audit."""
