"""OTLP/HTTP metrics: decoding an ExportMetricsServiceRequest and turning its points into ingest rows.

Every point becomes the same row dict the batch formats give the row check (metric, system, workload,
value, unit, observed_at, run_id, source, tags), so the one rule set (metrics/ingest/rules.py) judges it.
Only what is OTLP-specific is decided here: which metric a name means, where the system, workload and
run come from, how a UCUM unit reads in pint, and which point kinds carry a value at all. A point
that cannot become a row is a `Rejected` naming why.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)

from core.api.parsers import shown
from core.errors import ApplicationError
from metrics.ingest.check import OTLP_STREAM
from metrics.ingest.formats.histograms import (
    Histogram,
    histogram_explicit,
    histogram_exponential,
    histogram_problem,
)
from metrics.models import MetricDefinition
from metrics.units import UnitError, unit_parse

if TYPE_CHECKING:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.metrics.v1.metrics_pb2 import (
        ExponentialHistogramDataPoint,
        HistogramDataPoint,
        Metric,
        NumberDataPoint,
    )

# The points of the kinds that carry a value (a gauge's or a sum's, a histogram's mean).
DataPoint: TypeAlias = "NumberDataPoint | HistogramDataPoint | ExponentialHistogramDataPoint"

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
SOURCE = "otlp"
SYSTEM, WORKLOAD, RUN_ID = "rebuild.system", "rebuild.workload", "rebuild.run_id"
INSTANCE_ID = "service.instance.id"
GAUGE, SUM, HISTOGRAM = "gauge", "sum", "histogram"
# AggregationTemporality of a Sum or a Histogram (0, unspecified, is read as delta).
TEMPORALITY_DELTA, TEMPORALITY_CUMULATIVE = 1, 2
# A point's flag saying it is a staleness marker with no value (OTLP DataPointFlags).
NO_RECORDED_VALUE = 1


@dataclass(frozen=True)
class Rejected:
    """A point that cannot become an ingest row."""

    label: str
    message: str


@dataclass(frozen=True)
class Point:
    """A row for the checks, how to name its point in an error message, and what the stream rules
    (metrics.ingest.streams) need: which stream it belongs to and what it holds."""

    label: str
    row: dict[str, Any]
    kind: str = GAUGE
    stream: str = ""
    start_ns: int = 0
    time_ns: int = 0
    cumulative: bool = False
    monotonic: bool = False
    sampling: str = ""
    value: float | None = None
    histogram: Histogram | None = None


# --- decoding ------------------------------------------------------------------------------------------


def media_type(content_type: str) -> str:
    return (content_type or "").split(";")[0].strip().lower()


def request_decode(
    body: bytes, content_type: str, content_encoding: str, limit: int
) -> ExportMetricsServiceRequest:
    """The ExportMetricsServiceRequest in the body: 415 for another type, 400 when it cannot be read."""
    kind = media_type(content_type)
    if kind not in (PROTOBUF, JSON):
        raise ApplicationError(
            f"Unsupported content type '{shown(kind)}': send {PROTOBUF} or {JSON}.",
            status=415,
            field="Content-Type",
        )
    encoding = (content_encoding or "identity").strip().lower()
    if encoding == "gzip":
        body = _gunzip(body, limit)
    elif encoding != "identity":
        raise ApplicationError(
            f"Unsupported content encoding '{shown(encoding)}': send gzip or none.",
            status=415,
            field="Content-Encoding",
        )
    request = ExportMetricsServiceRequest()
    try:
        if kind == PROTOBUF:
            request.ParseFromString(body)
        else:
            # OTLP/JSON is the protobuf JSON mapping; receivers ignore fields they do not know.
            document = json.loads(body.decode("utf-8"))
            if not isinstance(document, dict):
                raise ValueError("not a JSON object")
            json_format.ParseDict(document, request, ignore_unknown_fields=True)
    # json_format raises more than ParseError on odd input (TypeError, OverflowError…): any failure to
    # read the body is the client's 400, never a 500.
    except Exception as exc:
        what = "protobuf ExportMetricsServiceRequest" if kind == PROTOBUF else "OTLP/JSON metrics request"
        raise ApplicationError(f"The body is not a valid {what}.", status=400, field="body") from exc
    return request


def _gunzip(body: bytes, limit: int) -> bytes:
    """Inflate at most `limit` bytes, so a small bomb cannot fill the memory."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, limit)
    except zlib.error as exc:
        raise ApplicationError("The body is not valid gzip.", status=400, field="body") from exc
    if inflater.unconsumed_tail:
        raise ApplicationError(f"The inflated body exceeds {limit:,} bytes.", status=413, field="body")
    if not inflater.eof:
        raise ApplicationError("The gzip body is truncated.", status=400, field="body")
    return data


def response_encode(rejected: int, message: str, content_type: str) -> tuple[bytes, str]:
    """ExportMetricsServiceResponse in the request's content type; partial_success only when points were
    rejected (the spec: an empty one means everything was accepted)."""
    response = ExportMetricsServiceResponse()
    if rejected or message:
        response.partial_success.rejected_data_points = rejected
        response.partial_success.error_message = message
    if media_type(content_type) == PROTOBUF:
        return response.SerializeToString(), PROTOBUF
    return json_format.MessageToJson(response, indent=None).encode(), JSON


# --- mapping -------------------------------------------------------------------------------------------


def otel_names() -> dict[str, tuple[str, str]]:
    """OpenTelemetry metric name → (metric key, sampling): the active version's otel_name (else the
    newest version's), or the key when blank. The ingest service then resolves the key to its active
    version."""
    names: dict[str, tuple[str, str]] = {}
    chosen: dict[str, MetricDefinition] = {}
    for definition in MetricDefinition.objects.only("key", "version", "status", "otel_name", "sampling"):
        current = chosen.get(definition.key)
        if current is None or _rank(definition) > _rank(current):
            chosen[definition.key] = definition
    for key, definition in chosen.items():
        names[definition.otel_metric_name] = (key, definition.sampling)
    return names


def _rank(definition: MetricDefinition) -> tuple[bool, int]:
    return (definition.status == MetricDefinition.Status.ACTIVE, definition.version)


# UCUM atoms pint spells otherwise; `{annotation}` is a count of that thing.
_BYTES = re.compile(r"(?<![A-Za-z])([kMGTPE]i?|Ki)?By(?![A-Za-z])")
_ANNOTATION = re.compile(r"\{([^{}]*)\}")
_PRODUCT = re.compile(r"(?<=[A-Za-z}\]])\.(?=[A-Za-z{\[])")


def pint_unit(ucum: str) -> str | None:
    """The pint spelling of an OTel (UCUM) unit; None when blank (the definition's unit is meant).
    `{token}/s` is token/s since tokens are a unit here; an annotation pint does not know (`{packet}`)
    counts as 1."""
    text = (ucum or "").strip()
    if not text:
        return None
    if text == "1":
        return "dimensionless"
    if text == "%":
        return "percent"
    text = _BYTES.sub(lambda m: f"{m.group(1) or ''}B", text)
    text = _PRODUCT.sub("*", text)
    text = _ANNOTATION.sub(_annotation, text)
    return text.replace("%", "percent")


def _annotation(match: re.Match[str]) -> str:
    name: str = match.group(1).strip()
    try:
        unit_parse(name)
    except UnitError:
        return "1"
    return name


def _any_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_any_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {item.key: _any_value(item.value) for item in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind) if kind else None


def _attributes(items: Iterable[KeyValue]) -> dict[str, Any]:
    return {item.key: _any_value(item.value) for item in items}


def _time(nanos: int) -> datetime:
    # A uint64 of nanoseconds ends in the year 2554, well within datetime; the ingest rules refuse the future.
    return datetime.fromtimestamp(nanos // 10**9, tz=UTC).replace(microsecond=nanos % 10**9 // 1000)


def points_from_request(
    request: ExportMetricsServiceRequest, names: dict[str, tuple[str, str]]
) -> tuple[list[Point], list[Rejected]]:
    """Every data point of the request as an ingest row with its stream, or rejected with a reason.
    `names`: OpenTelemetry name → (metric key, the definition's sampling), as otel_names() gives."""
    points: list[Point] = []
    rejected: list[Rejected] = []
    for resource_metrics in request.resource_metrics:
        resource = _attributes(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            scope = (scope_metrics.scope.name, scope_metrics.scope.version)
            for metric in scope_metrics.metrics:
                context = (resource, scope)
                _metric_points(metric, context, names, points, rejected)
    return points, rejected


def _metric_points(
    metric: Metric,
    context: tuple[dict[str, Any], tuple[str, str]],
    names: dict[str, tuple[str, str]],
    points: list[Point],
    rejected: list[Rejected],
) -> None:
    kind = metric.WhichOneof("data")
    label = f"metric '{shown(metric.name)}'"
    if kind is None:
        return
    data = getattr(metric, kind)
    if kind == "summary":
        rejected.extend(
            Rejected(label, "Summary points are not accepted; send a gauge, sum or histogram.")
            for _ in data.data_points
        )
        return
    resource, scope = context
    named = names.get(metric.name)
    temporality = getattr(data, "aggregation_temporality", TEMPORALITY_DELTA)
    cumulative = kind != "gauge" and temporality == TEMPORALITY_CUMULATIVE
    for point in data.data_points:
        if point.flags & NO_RECORDED_VALUE:
            continue  # a staleness marker: there is no value to store
        if named is None:
            rejected.append(
                Rejected(label, f"no metric definition has the OpenTelemetry name '{shown(metric.name)}'.")
            )
            continue
        key, sampling = named
        problem = sampling_problem(kind, sampling, key)
        if problem:
            rejected.append(Rejected(label, problem))
            continue
        found = _point_value(point, kind)
        if isinstance(found, str):
            rejected.append(Rejected(label, found))
            continue
        row = _row(key, metric.unit, point, resource)
        if isinstance(row, str):
            rejected.append(Rejected(label, row))
            continue
        attributes = _attributes(point.attributes)
        identity = [resource, scope, metric.name, kind, attributes]
        stream = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()
        if isinstance(found, Histogram):
            row[OTLP_STREAM] = stream  # part of a histogram point's key (check.check_rows)
        points.append(
            Point(
                label,
                row,
                kind=KIND[kind],
                stream=stream,
                start_ns=point.start_time_unix_nano,
                time_ns=point.time_unix_nano,
                cumulative=cumulative,
                monotonic=bool(getattr(data, "is_monotonic", False)),
                sampling=sampling,
                value=found if isinstance(found, float) else None,
                histogram=replace(found, stream=stream) if isinstance(found, Histogram) else None,
            )
        )


# What one point of each kind is, and the samplings (metrics.models.Sampling) it agrees with. A gauge
# is one reading of a value, whatever the definition samples. A sum's point is an aggregate over its
# interval (start_time … time), so it can only be a per_interval value. A histogram's buckets hold
# individual measurements, recorded one by one: requests, steps or runs, never an interval's aggregate.
KIND = {"gauge": GAUGE, "sum": SUM, "histogram": HISTOGRAM, "exponential_histogram": HISTOGRAM}
KIND_SAMPLINGS = {
    GAUGE: {"per_request", "per_step", "per_run", "per_interval"},
    SUM: {"per_interval"},
    HISTOGRAM: {"per_request", "per_step", "per_run"},
}
KIND_MEANS = {
    GAUGE: "one reading",
    SUM: "an aggregate over its interval",
    HISTOGRAM: "individual measurements in buckets",
}


def sampling_problem(kind: str, sampling: str, key: str) -> str:
    """Why a point of this OTLP kind cannot be a value of a definition with this sampling ('' if it can)."""
    family = KIND.get(kind, kind)
    if sampling in KIND_SAMPLINGS[family]:
        return ""
    fits = ", ".join(sorted(KIND_SAMPLINGS[family]))
    return (
        f"a {kind} point is {KIND_MEANS[family]}, but {key} is sampled {sampling}; "
        f"a {kind} fits a definition sampled {fits}."
    )


def _point_value(point: DataPoint, kind: str) -> float | Histogram | str:
    # `kind` says which type the point is: a gauge's or a sum's point is a NumberDataPoint.
    if kind in ("gauge", "sum"):
        which = cast("NumberDataPoint", point).WhichOneof("value")
        return float(getattr(point, which)) if which else "the point has no value."
    if not point.count:
        return "the histogram point has a count of 0, so it has no mean."
    if not cast("HistogramDataPoint | ExponentialHistogramDataPoint", point).HasField("sum"):
        return "the histogram point has no sum, so it has no mean."
    if kind == "histogram":
        histogram = histogram_explicit(cast("HistogramDataPoint", point))
    else:
        histogram = histogram_exponential(cast("ExponentialHistogramDataPoint", point))
    return histogram_problem(histogram) or histogram


def _row(key: str, unit: str, point: DataPoint, resource: dict[str, Any]) -> dict[str, Any] | str:
    """The ingest row of a point, without its value: the stream rules set it (a delta, a histogram's
    mean), or drop the point."""
    attributes = _attributes(point.attributes)

    def attribute(name: str) -> Any:  # the point's own attribute is the more specific one
        return attributes.get(name, resource.get(name))

    system, workload = attribute(SYSTEM), attribute(WORKLOAD)
    for name, found in ((SYSTEM, system), (WORKLOAD, workload)):
        if found is None:
            return f"neither the point nor its resource has the attribute {name}."
        if not isinstance(found, str):
            return f"the attribute {name} must be a string."
    run_id = attribute(RUN_ID)
    if run_id is None:
        run_id = resource.get(INSTANCE_ID)
    if run_id is None and point.start_time_unix_nano:
        run_id = _time(point.start_time_unix_nano).isoformat()
    if not point.time_unix_nano:
        return "the point has no time (time_unix_nano is 0)."
    return {
        "metric": key,
        "system": system,
        "workload": workload,
        "unit": pint_unit(unit),
        "observed_at": _time(point.time_unix_nano),
        "run_id": "" if run_id is None else str(run_id),
        "source": SOURCE,
        "tags": {name: item for name, item in attributes.items() if not name.startswith("rebuild.")},
    }
