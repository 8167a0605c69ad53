"""POST /otlp/v1/metrics: decoding, the mapping rules and partial success, with hand-built requests."""

from __future__ import annotations

import gzip
import json
import time
from datetime import UTC, datetime

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import (
    ExponentialHistogramDataPoint,
    HistogramDataPoint,
    Metric,
    NumberDataPoint,
    ResourceMetrics,
    ScopeMetrics,
    SummaryDataPoint,
)
from rest_framework.test import APIClient

from metrics.ingest.formats.otlp import pint_unit
from metrics.models import HistogramPoint, MetricDefinition, Observation
from metrics.services import definition_update
from tests.conftest import api_token
from tests.metrics.factories import definition

URL = "/otlp/v1/metrics"
PROTOBUF = "application/x-protobuf"
NOW_NS = time.time_ns() - 60 * 10**9
START_NS = NOW_NS - 3600 * 10**9


def attrs(**values) -> list[KeyValue]:
    out = []
    for key, value in values.items():
        name = key.replace("__", ".")
        any_value = (
            AnyValue(int_value=value)
            if isinstance(value, int) and not isinstance(value, bool)
            else AnyValue(string_value=str(value))
        )
        out.append(KeyValue(key=name, value=any_value))
    return out


def gauge(name: str, *values, unit: str = "", time_ns: int = NOW_NS, **point_attrs) -> Metric:
    points = [
        NumberDataPoint(
            as_double=value,
            time_unix_nano=time_ns - i * 10**9,
            start_time_unix_nano=START_NS,
            attributes=attrs(**point_attrs),
        )
        for i, value in enumerate(values)
    ]
    metric = Metric(name=name, unit=unit)
    metric.gauge.data_points.extend(points)
    return metric


def export(*metrics: Metric, **resource_attrs) -> ExportMetricsServiceRequest:
    resource = {"rebuild__system": "rebuilt", "rebuild__workload": "finetune", **resource_attrs}
    resource_metrics = ResourceMetrics(scope_metrics=[ScopeMetrics(metrics=list(metrics))])
    resource_metrics.resource.attributes.extend(attrs(**resource))
    return ExportMetricsServiceRequest(resource_metrics=[resource_metrics])


@pytest.fixture
def token(ingest_user) -> str:
    return api_token(ingest_user, "ingest")


def post(request, token: str, *, as_json=False, gzipped=False, keyword="Bearer"):
    body = json_format.MessageToJson(request).encode() if as_json else request.SerializeToString()
    headers = {"Authorization": f"{keyword} {token}"}
    if gzipped:
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    return APIClient().generic(
        "POST", URL, body, content_type="application/json" if as_json else PROTOBUF, headers=headers
    )


def answer(response) -> ExportMetricsServiceResponse:
    assert response.status_code == 200, response.content
    parsed = ExportMetricsServiceResponse()
    if response["Content-Type"] == PROTOBUF:
        parsed.ParseFromString(response.content)
    else:
        json_format.Parse(response.content, parsed)
    return parsed


def test_gauge_points_become_observations_in_the_definition_unit(ref, token):
    response = post(export(gauge("latency", 250.0, 300.0, unit="ms")), token)
    assert answer(response).HasField("partial_success") is False
    stored = sorted(Observation.objects.values_list("value", "unit", "source", "run_id"))
    start = datetime.fromtimestamp(START_NS // 10**9, UTC).replace(microsecond=START_NS % 10**9 // 1000)
    assert stored == [(0.25, "ms", "otlp", start.isoformat()), (0.3, "ms", "otlp", start.isoformat())]
    first = Observation.objects.order_by("-observed_at").first()
    assert first.system.key == "rebuilt" and first.workload.key == "finetune"
    assert abs(first.observed_at.timestamp() - NOW_NS / 1e9) < 1e-3


def test_json_and_gzip_are_read_and_answered_in_kind(ref, token):
    response = post(export(gauge("latency", 1.0)), token, as_json=True, gzipped=True, keyword="Token")
    assert response["Content-Type"] == "application/json"
    assert response.json() == {}
    assert Observation.objects.count() == 1


def test_point_attributes_win_over_the_resource_and_run_precedence(ref, token):
    metrics = [
        gauge("latency", 1.0, rebuild__system="legacy", rebuild__run_id="run-7", host="gpu-1"),
        gauge("latency", 2.0, time_ns=NOW_NS - 10**10),
    ]
    answer(post(export(*metrics, service__instance__id="instance-a"), token))
    rows = {o.value: o for o in Observation.objects.select_related("system")}
    assert (rows[1.0].system.key, rows[1.0].run_id, rows[1.0].tags) == ("legacy", "run-7", {"host": "gpu-1"})
    assert (rows[2.0].system.key, rows[2.0].run_id) == ("rebuilt", "instance-a")


def test_the_otel_name_maps_to_its_definition(ref, token, metric_owner):
    definition_update(
        actor=metric_owner, definition=ref["latency"], changes={"otel_name": "http.server.duration"}
    )
    assert (
        answer(post(export(gauge("http.server.duration", 0.5, unit="s")), token)).HasField("partial_success")
        is False
    )
    assert Observation.objects.get().definition == ref["latency"]
    rejected = answer(post(export(gauge("nothing.here", 0.5)), token)).partial_success
    assert rejected.rejected_data_points == 1
    assert "no metric definition has the OpenTelemetry name 'nothing.here'" in rejected.error_message


def test_histograms_are_stored_as_their_buckets_and_empty_or_inconsistent_ones_refused(ref, token):
    histogram = Metric(name="latency", unit="ms")
    histogram.histogram.data_points.extend(
        [
            HistogramDataPoint(
                count=4,
                sum=1000.0,
                bucket_counts=[0, 3, 1],
                explicit_bounds=[100.0, 300.0],
                min=150.0,
                max=400.0,
                time_unix_nano=NOW_NS,
                start_time_unix_nano=START_NS,
            ),
            HistogramDataPoint(count=0, sum=0.0, time_unix_nano=NOW_NS - 10**9),
            HistogramDataPoint(
                count=3,
                sum=3.0,
                bucket_counts=[1, 1],
                explicit_bounds=[1.0],
                time_unix_nano=NOW_NS - 3 * 10**9,
            ),
        ]
    )
    exponential = Metric(name="latency", unit="s")
    point = ExponentialHistogramDataPoint(
        count=2, sum=3.0, scale=0, zero_count=1, time_unix_nano=NOW_NS - 2 * 10**9
    )
    point.positive.offset, point.positive.bucket_counts[:] = 1, [1]  # (2, 4]
    exponential.exponential_histogram.data_points.append(point)
    result = answer(post(export(histogram, exponential), token)).partial_success
    assert result.rejected_data_points == 2
    assert "count of 0" in result.error_message
    assert "buckets hold 2 values but its count is 3" in result.error_message
    assert not Observation.objects.exists()
    stored = {
        h.count: (h.sum, h.lows, h.highs, h.counts, h.low, h.high, h.unit)
        for h in HistogramPoint.objects.all()
    }
    assert stored == {
        # ms in the definition's seconds, each bucket narrowed to the point's min and max
        4: (1.0, [0.15, 0.3], [0.3, 0.4], [3, 1], 0.15, 0.4, "ms"),
        2: (3.0, [0.0, 2.0], [0.0, 4.0], [1, 1], None, None, "s"),
    }
    assert MetricDefinition.objects.get(pk=ref["latency"].pk).has_histograms


def test_bad_points_are_counted_and_good_ones_stored(ref, token):
    future = time.time_ns() + 3600 * 10**9
    metrics = [
        gauge("latency", 1.0, 2.0),
        gauge("latency", 3.0, rebuild__system="mainframe"),
        gauge("latency", float("nan"), time_ns=NOW_NS - 5 * 10**9),
        gauge("latency", 4.0, time_ns=future),
        gauge("latency", 5.0, unit="By", time_ns=NOW_NS - 7 * 10**9),
    ]
    summary = Metric(name="latency")
    summary.summary.data_points.append(SummaryDataPoint(count=1, sum=1.0, time_unix_nano=NOW_NS))
    result = answer(post(export(*metrics, summary), token)).partial_success
    assert result.rejected_data_points == 5
    for phrase in ("unknown system 'mainframe'", "finite", "future", "cannot be converted"):
        assert phrase in result.error_message
    assert "(and 0 more)" not in result.error_message
    assert sorted(Observation.objects.values_list("value", flat=True)) == [1.0, 2.0]


def test_a_missing_system_attribute_is_named(ref, token):
    request = export(gauge("latency", 1.0))
    del request.resource_metrics[0].resource.attributes[:]
    result = answer(post(request, token)).partial_success
    assert result.rejected_data_points == 1
    assert "rebuild.system" in result.error_message


def test_a_repeated_push_is_a_no_op(ref, token):
    request = export(gauge("latency", 1.0, 2.0))
    answer(post(request, token))
    assert answer(post(request, token)).HasField("partial_success") is False
    assert Observation.objects.count() == 2


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        (b"\xff\xff\xff", PROTOBUF, 400),
        (b"{not json", "application/json", 400),
        (b'{"resourceMetrics": 5}', "application/json", 400),
        (b"<xml/>", "text/xml", 415),
    ],
)
def test_an_undecodable_body_is_a_client_error(ref, token, body, content_type, status):
    response = APIClient().generic(
        "POST", URL, body, content_type=content_type, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == status
    assert response.json()["detail"]


def test_broken_gzip_is_a_400(ref, token):
    response = APIClient().generic(
        "POST",
        URL,
        b"not gzip",
        content_type=PROTOBUF,
        headers={"Authorization": f"Bearer {token}", "Content-Encoding": "gzip"},
    )
    assert response.status_code == 400


def test_auth_is_the_api_token_with_the_ingest_permission(ref, viewer):
    body = export(gauge("latency", 1.0)).SerializeToString()
    anonymous = APIClient().generic("POST", URL, body, content_type=PROTOBUF)
    assert anonymous.status_code == 401
    wrong = APIClient().generic(
        "POST", URL, body, content_type=PROTOBUF, headers={"Authorization": "Bearer nope"}
    )
    assert wrong.status_code == 401
    viewer_token = api_token(viewer)
    refused = APIClient().generic(
        "POST", URL, body, content_type=PROTOBUF, headers={"Authorization": f"Bearer {viewer_token}"}
    )
    assert refused.status_code == 403
    assert "metrics.add_observation" in refused.json()["detail"]
    assert Observation.objects.count() == 0


@pytest.mark.parametrize(
    ("ucum", "pint"),
    [
        ("", None),
        ("ms", "ms"),
        ("By", "B"),
        ("KiBy/s", "KiB/s"),
        ("{token}/s", "token/s"),
        ("{packet}/s", "1/s"),
        ("1", "dimensionless"),
        ("%", "percent"),
        ("W.s", "W*s"),
    ],
)
def test_ucum_units_read_in_pint(ucum, pint):
    assert pint_unit(ucum) == pint


def test_a_ratio_converts_to_a_percent_definition(ref, token):
    definition(key="utilization", unit="percent", direction="higher_is_better")
    answer(post(export(gauge("utilization", 0.42, unit="1")), token))
    assert Observation.objects.get().value == pytest.approx(42.0)


def test_integer_sum_points_are_stored(ref, token):
    definition(key="tokens", unit="token", direction="higher_is_better", sampling="per_interval")
    metric = Metric(name="tokens", unit="{token}")
    metric.sum.is_monotonic = True
    metric.sum.data_points.append(
        NumberDataPoint(as_int=1200, time_unix_nano=NOW_NS, start_time_unix_nano=START_NS)
    )
    answer(post(export(metric), token))
    assert Observation.objects.get().value == 1200.0


def test_the_response_is_json_for_json(ref, token):
    response = post(export(gauge("latency", 1.0, rebuild__system="nope")), token, as_json=True)
    body = json.loads(response.content)
    assert response["Content-Type"] == "application/json"
    assert body["partialSuccess"]["rejectedDataPoints"] == "1"
    assert "unknown system 'nope'" in body["partialSuccess"]["errorMessage"]


def test_the_last_nanosecond_of_uint64_is_rejected_not_a_crash(ref, token):
    result = answer(post(export(gauge("latency", 1.0, time_ns=2**64 - 1)), token)).partial_success
    assert result.rejected_data_points == 1
    assert "in the future" in result.error_message


@pytest.mark.parametrize(
    "body",
    [
        b'{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"gauge": {"dataPoints": [{"asInt": "1e999"}]}}]}]}]}',
        b'{"resourceMetrics": [{"resource": {"attributes": [{"key": 1}]}}]}',
        b"[]",
        b'"text"',
        b"\xff\xfe",
    ],
)
def test_odd_json_is_a_400(ref, token, body):
    response = APIClient().generic(
        "POST", URL, body, content_type="application/json", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 400, response.content


@pytest.mark.parametrize(
    ("kind", "sampling", "refused"),
    [
        ("sum", "per_request", True),
        ("sum", "per_step", True),
        ("sum", "per_run", True),
        ("sum", "per_interval", False),
        ("histogram", "per_interval", True),
        ("histogram", "per_step", False),
        ("histogram", "per_run", False),
        ("gauge", "per_run", False),
        ("gauge", "per_interval", False),
    ],
)
def test_a_point_kind_must_agree_with_the_definition_sampling(ref, token, kind, sampling, refused):
    definition(key="work", unit="token", direction="higher_is_better", sampling=sampling)
    metric = Metric(name="work", unit="{token}")
    if kind == "histogram":
        metric.histogram.data_points.append(
            HistogramDataPoint(
                count=1, sum=2.0, bucket_counts=[1], time_unix_nano=NOW_NS, start_time_unix_nano=START_NS
            )
        )
    else:
        getattr(metric, kind).data_points.append(
            NumberDataPoint(as_double=2.0, time_unix_nano=NOW_NS, start_time_unix_nano=START_NS)
        )
    result = answer(post(export(metric), token))
    assert result.partial_success.rejected_data_points == (1 if refused else 0)
    if refused:
        assert f"work is sampled {sampling}" in result.partial_success.error_message
    assert Observation.objects.exists() + HistogramPoint.objects.exists() == (not refused)
