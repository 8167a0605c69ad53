"""The real client: an unmodified OpenTelemetry SDK exports over OTLP/HTTP to the live server.

No mocks: the SDK's MeterProvider and its proto-http exporter post protobuf (gzip) with the API token,
the receiver stores what they sent, and the points are read back through GET /api/v1/observations/.
"""

from __future__ import annotations

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource

from metrics.models import Observation
from tests.conftest import api_token, make_user
from tests.metrics.factories import definition, reference_data


@pytest.fixture
def world(transactional_db):
    reference_data()  # latency in s, systems legacy/rebuilt, workloads finetune/pretrain
    definition(key="tokens", unit="token", direction="higher_is_better", sampling="per_run")
    definition(key="step-time", unit="ms", direction="lower_is_better", sampling="per_step")
    user = make_user("otel-exporter", perms=("metrics.add_observation",))
    return api_token(user, "ingest", "read")  # pushes, then reads the points back


def export_with_the_sdk(url: str, token: str) -> None:
    exporter = OTLPMetricExporter(
        endpoint=url, headers={"Authorization": f"Bearer {token}"}, compression=Compression.Gzip, timeout=10
    )
    # An hour between exports: only force_flush() sends, once.
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
    resource = Resource.create(
        {"rebuild.system": "rebuilt", "rebuild.workload": "finetune", "rebuild.run_id": "sdk-run-1"}
    )
    provider = MeterProvider(resource=resource, metric_readers=[reader])
    meter = provider.get_meter("rebuild-tracker-tests")
    meter.create_gauge("latency", unit="ms").set(250.0, {"rebuild.system": "legacy", "host": "gpu-1"})
    counter = meter.create_counter("tokens", unit="{token}")
    counter.add(100)
    counter.add(20)
    histogram = meter.create_histogram("step-time", unit="s")
    histogram.record(1.0)
    histogram.record(3.0)
    try:
        provider.force_flush(timeout_millis=20_000)
    finally:
        provider.shutdown()


def read_back(base: str, token: str) -> dict[str, dict]:
    response = httpx.get(
        f"{base}/api/v1/observations/",
        params={"source": "otlp"},
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return {row["metric"]: row for row in response.json()["results"]}


def test_the_opentelemetry_sdk_pushes_and_the_api_reads_the_points_back(world, live_server):
    token = world
    export_with_the_sdk(f"{live_server.url}/otlp/v1/metrics", token)
    rows = read_back(live_server.url, token)
    assert set(rows) == {"latency@1", "tokens@1", "step-time@1"}
    latency, tokens, step = rows["latency@1"], rows["tokens@1"], rows["step-time@1"]
    assert (latency["system"], latency["workload"], latency["run_id"]) == ("legacy", "finetune", "sdk-run-1")
    assert latency["value"] == pytest.approx(0.25)  # 250 ms in the definition's seconds
    assert latency["tags"] == {"host": "gpu-1"}
    assert (tokens["system"], tokens["value"], tokens["unit"]) == ("rebuilt", 120.0, "token")
    assert step["value"] == pytest.approx(2000.0)  # the histogram's mean, 2 s, in ms
    assert step["tags"]["otel_histogram"] == {"count": 2, "sum": 4.0}


def test_a_wrong_token_fails_the_export(world, live_server, caplog):
    # The SDK's force_flush() answers True whatever the exporter got; its log says what happened.
    export_with_the_sdk(f"{live_server.url}/otlp/v1/metrics", "not-a-token")
    assert any("code: 401" in record.getMessage() for record in caplog.records)
    assert not Observation.objects.exists()
