"""Fleet metrics: outcomes as OpenTelemetry instruments, read back with the SDK's in-memory reader."""

from __future__ import annotations

from typing import Any

from pydantic_lenient.observe.failures import FieldFailure
from pydantic_lenient.observe.outcomes import CallOutcome
from pydantic_lenient.observe.recorder import OutcomeRecorder
from tests.sdks import require


def _points(reader: Any) -> dict[str, dict[frozenset[tuple[str, Any]], Any]]:
    """Each metric's data points by their attributes (a counter's value, a histogram's count and sum)."""
    found: dict[str, dict[frozenset[tuple[str, Any]], Any]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points = found.setdefault(metric.name, {})
                for point in metric.data.data_points:
                    key = frozenset(point.attributes.items())
                    points[key] = (point.count, point.sum) if hasattr(point, "bucket_counts") else point.value
    return found


def _replicas(count: int) -> tuple[Any, list[Any]]:
    """One metric reader that ``count`` replicas' meters all report to, as a backend adds them up."""
    export = require("opentelemetry.sdk.metrics.export")
    sdk = require("opentelemetry.sdk.metrics")
    from pydantic_lenient.observe.otel import OtelMetrics

    reader = export.InMemoryMetricReader()
    provider = sdk.MeterProvider(metric_readers=[reader])
    return reader, [OtelMetrics(provider) for _ in range(count)]


def test_outcomes_become_counters_and_a_duration_histogram() -> None:
    reader, [metrics] = _replicas(1)
    limit = FieldFailure("limit", "int_type", "digit string")
    metrics.record(CallOutcome("search", "ok", 2.0, norms=("search-limit",)))
    metrics.record(CallOutcome("search", "ok", 4.0))
    metrics.record(CallOutcome("search", "refused", 1.0, (limit,)))
    metrics.record(CallOutcome("edit_file", "error", 8.0))
    points = _points(reader)
    assert points["pydantic_lenient.calls"] == {
        frozenset({("tool", "search"), ("status", "ok")}): 2,
        frozenset({("tool", "search"), ("status", "refused")}): 1,
        frozenset({("tool", "edit_file"), ("status", "error")}): 1,
    }
    assert points["pydantic_lenient.call.duration"][frozenset({("tool", "search"), ("status", "ok")})] == (2, 6.0)
    assert points["pydantic_lenient.normalizations"] == {frozenset({("tool", "search"), ("rule", "search-limit")}): 1}
    assert points["pydantic_lenient.validation_failures"] == {
        frozenset({("tool", "search"), ("param", "limit"), ("error_type", "int_type"), ("shape", "digit string")}): 1
    }


def test_replicas_add_up() -> None:
    reader, replicas = _replicas(3)
    for metrics in replicas:
        metrics.record(CallOutcome("search", "ok", 1.0))
    assert _points(reader)["pydantic_lenient.calls"] == {frozenset({("tool", "search"), ("status", "ok")}): 3}


def test_the_recorder_feeds_its_sinks() -> None:
    reader, [metrics] = _replicas(1)
    recorder = OutcomeRecorder(sinks=[metrics], flush_every=3600)
    recorder.record("search", "ok", 1.0)
    recorder.record("search", "refused", 1.0, failures=(FieldFailure("x", "missing", "missing parameter `x`"),))
    recorder.close()
    calls = _points(reader)["pydantic_lenient.calls"]
    assert sum(calls.values()) == 2


def test_a_failing_sink_breaks_nothing() -> None:
    class Broken:
        def record(self, outcome: CallOutcome) -> None:
            raise RuntimeError("exporter down")

    recorder = OutcomeRecorder(sinks=[Broken()], flush_every=3600)
    recorder.record("search", "ok", 1.0)
    recorder.close()
    assert recorder.snapshot().tools[0].ok == 1
