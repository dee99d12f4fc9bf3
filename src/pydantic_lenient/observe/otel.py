"""Fleet metrics: call outcomes as OpenTelemetry counters and a duration histogram.

    from pydantic_lenient.observe.otel import OtelMetrics
    recorder = OutcomeRecorder("logs/", sinks=[OtelMetrics()])   # the global MeterProvider

Counters add up across replicas in any OpenTelemetry backend, where one ``outcomes.json`` per
process does not:

* ``pydantic_lenient.calls`` by ``tool`` and ``status`` (``ok``, ``refused``, ``error``);
* ``pydantic_lenient.call.duration`` (ms), a histogram by ``tool`` and ``status``;
* ``pydantic_lenient.normalizations`` by ``tool`` and ``rule``;
* ``pydantic_lenient.validation_failures`` by ``tool``, ``param``, ``error_type`` and ``shape``.

Uses only OpenTelemetry's metrics API; the application chooses the SDK and exporter. Needs the
``otel`` extra.
"""

from __future__ import annotations

from opentelemetry import metrics

from pydantic_lenient._version import __version__

from .outcomes import CallOutcome
from .shapes import clean_name

__all__ = ("OtelMetrics",)


class OtelMetrics:
    """An outcome sink (`pydantic_lenient.observe.outcomes.OutcomeSink`) that feeds OpenTelemetry instruments."""

    def __init__(self, meter_provider: metrics.MeterProvider | None = None) -> None:
        meter = metrics.get_meter("pydantic_lenient", __version__, meter_provider=meter_provider)
        self.calls = meter.create_counter(
            "pydantic_lenient.calls", unit="{call}", description="Tool calls by tool and status"
        )
        self.duration = meter.create_histogram(
            "pydantic_lenient.call.duration", unit="ms", description="Tool call duration by tool and status"
        )
        self.normalizations = meter.create_counter(
            "pydantic_lenient.normalizations",
            unit="{normalization}",
            description="Normalizer rules that changed a call, by tool and rule",
        )
        self.validation_failures = meter.create_counter(
            "pydantic_lenient.validation_failures",
            unit="{failure}",
            description="Refused fields by tool, parameter, error type and value shape",
        )

    def record(self, outcome: CallOutcome) -> None:
        tool = clean_name(outcome.tool)
        attributes = {"tool": tool, "status": outcome.status}
        self.calls.add(1, attributes)
        self.duration.record(outcome.duration_ms, attributes)
        for rule in outcome.norms:
            self.normalizations.add(1, {"tool": tool, "rule": clean_name(rule)})
        for failure in outcome.failures:
            self.validation_failures.add(
                1,
                {
                    "tool": tool,
                    "param": clean_name(failure.param),
                    "error_type": clean_name(failure.error_type),
                    "shape": clean_name(failure.shape),
                },
            )
