"""Tests of `pydantic_lenient.observe`: outcomes, the log directory, the dashboard, OpenTelemetry."""
