"""The command line's OpenTelemetry, configured the standard way: from the ``OTEL_*`` environment.

    setup = telemetry_from_environment()      # None unless OTEL_* asks for an exporter
    try:
        run_proxy(UpstreamSpec(command), ProxyOptions(telemetry=setup.telemetry if setup else None))
    finally:
        if setup:
            setup.shutdown()                  # flushes what is still batched

Read as the OpenTelemetry SDK documents them: ``OTEL_SDK_DISABLED``, ``OTEL_SERVICE_NAME`` and
``OTEL_RESOURCE_ATTRIBUTES`` (the resource), ``OTEL_TRACES_EXPORTER`` and ``OTEL_METRICS_EXPORTER``
(``otlp``, ``console`` or ``none``; ``console`` writes to stderr, never to stdout, which is a
stdio proxy's channel to its host), ``OTEL_EXPORTER_OTLP_PROTOCOL`` (``http/protobuf``; ``grpc``
when ``opentelemetry-exporter-otlp-proto-grpc`` is installed), and the exporter's own
``OTEL_EXPORTER_OTLP_ENDPOINT``, ``_HEADERS`` and ``_TIMEOUT``. Nothing is exported unless one
of the exporter or endpoint variables is set, so a command never reaches for a collector nobody
named. The ``otel`` extra brings the SDK and the OTLP exporter.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

__all__ = ("OTEL_SWITCHES", "OtelSetup", "TelemetryConfigError", "telemetry_from_environment")

OTEL_SWITCHES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER",
)
"""The variables any one of which turns exporting on."""

_DEFAULT_SERVICE_NAME = "pydantic-lenient"


class TelemetryConfigError(ValueError):
    """The ``OTEL_*`` variables ask for what cannot be done (an unknown exporter, a missing package)."""


class OtelSetup(NamedTuple):
    """The telemetry to hand the proxy, and how to flush and stop its providers at exit."""

    telemetry: Any  # a LenientTelemetry
    shutdown: Callable[[], None]


def telemetry_from_environment(environ: Mapping[str, str] | None = None) -> OtelSetup | None:
    """Providers and exporters as ``environ`` (default ``os.environ``) asks, or None when it asks
    for none. Raises `TelemetryConfigError` for an exporter that is unknown or not installed.

    >>> telemetry_from_environment({}) is None
    True
    >>> telemetry_from_environment({"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}) is None
    True
    """
    environ = os.environ if environ is None else environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if not any(environ.get(name, "").strip() for name in OTEL_SWITCHES):
        return None
    traces = _exporter_names(environ, "OTEL_TRACES_EXPORTER")
    metric_names = _exporter_names(environ, "OTEL_METRICS_EXPORTER")
    if not traces and not metric_names:
        return None
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from .otel import LenientTelemetry
    except ImportError:
        raise TelemetryConfigError(
            "OTEL_* variables are set but the OpenTelemetry SDK is not installed: pip install 'pydantic-lenient[otel]'"
        ) from None
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": _DEFAULT_SERVICE_NAME}))
    protocol = _protocol(environ)
    tracer_provider = TracerProvider(resource=resource)
    for name in traces:
        tracer_provider.add_span_processor(BatchSpanProcessor(_span_exporter(name, protocol)))
    readers: list[MetricReader] = [
        PeriodicExportingMetricReader(_metric_exporter(name, protocol)) for name in metric_names
    ]
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)

    def shutdown() -> None:
        tracer_provider.shutdown()
        meter_provider.shutdown()

    return OtelSetup(LenientTelemetry(tracer_provider, meter_provider), shutdown)


def _exporter_names(environ: Mapping[str, str], variable: str) -> list[str]:
    names = [name.strip().lower() for name in environ.get(variable, "otlp").split(",") if name.strip()]
    for name in names:
        if name not in ("otlp", "console", "none"):
            raise TelemetryConfigError(f"{variable}={name!r:.80}: this command exports with otlp, console or none")
    return [name for name in names if name != "none"]


def _protocol(environ: Mapping[str, str]) -> str:
    protocol = environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf").strip().lower() or "http/protobuf"
    if protocol not in ("http/protobuf", "grpc"):
        raise TelemetryConfigError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r:.80}: expected http/protobuf or grpc")
    return protocol


def _span_exporter(name: str, protocol: str) -> Any:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter(out=sys.stderr)  # stdout is a stdio proxy's channel to the host
    if protocol == "grpc":
        module = _exporter_module("opentelemetry.exporter.otlp.proto.grpc.trace_exporter", "grpc")
    else:
        module = _exporter_module("opentelemetry.exporter.otlp.proto.http.trace_exporter", "http")
    return module.OTLPSpanExporter()


def _metric_exporter(name: str, protocol: str) -> Any:
    if name == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return ConsoleMetricExporter(out=sys.stderr)  # stdout is a stdio proxy's channel to the host
    if protocol == "grpc":
        module = _exporter_module("opentelemetry.exporter.otlp.proto.grpc.metric_exporter", "grpc")
    else:
        module = _exporter_module("opentelemetry.exporter.otlp.proto.http.metric_exporter", "http")
    return module.OTLPMetricExporter()


def _exporter_module(name: str, flavour: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise TelemetryConfigError(
            f"the OTLP exporter over {flavour} is not installed: "
            f"pip install opentelemetry-exporter-otlp-proto-{flavour}"
        ) from None
