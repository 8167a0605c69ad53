"""The real client: an unmodified OpenTelemetry SDK exports over OTLP/HTTP to the live server.

No mocks: the SDK's MeterProvider, its periodic reader and its proto-http exporter post protobuf
(gzip) with the API token, at the SDK's defaults (cumulative temporality, explicit-bucket
histograms, min/max recorded). Several exports per process, the export at shutdown, and a restart
(a new MeterProvider: a new start time). What is stored is read back through the comparison API and
GET /api/v1/observations/ and checked against numpy on the recorded values.
"""

from __future__ import annotations

import httpx
import numpy as np
import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource

from metrics.inference import order_statistic_ranks
from metrics.models import HistogramPoint, Observation, OtlpStream
from tests.conftest import api_token, make_user
from tests.metrics.factories import definition, reference_data

# What each process records between two exports, per system: step times in ms.
STEPS = {
    "legacy": [[1000.0, 2000.0, 3000.0], [1000.0, 2000.0], [3000.0, 1000.0, 2000.0, 3000.0]],
    "rebuilt": [[400.0, 420.0, 90.0], [700.0, 30.0, 55.0, 61.0], [8.0, 12.0, 260.0, 4800.0, 900.0]],
}


def recorded(system: str) -> list[float]:
    return [value for batch in STEPS[system] for value in batch]


@pytest.fixture
def world(transactional_db):
    reference_data()  # latency in s, systems legacy/rebuilt, workloads finetune/pretrain
    definition(key="tokens", unit="token", direction="higher_is_better", sampling="per_interval")
    definition(key="step-time", unit="ms", direction="lower_is_better", sampling="per_step")
    definition(key="queue-depth", unit="request", direction="lower_is_better", sampling="per_step")
    user = make_user("otel-exporter", perms=("metrics.add_observation",))
    return api_token(user, "ingest", "read")  # pushes, then reads the points back


class Process:
    """One exporting process: a MeterProvider at the SDK's defaults, exporting on force_flush (the
    periodic reader's own export, with an hour between timed ones) and once more at shutdown."""

    def __init__(self, url: str, token: str, system: str, **resource: str) -> None:
        exporter = OTLPMetricExporter(
            endpoint=url,
            headers={"Authorization": f"Bearer {token}"},
            compression=Compression.Gzip,
            timeout=10,
        )
        reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
        attributes = {"rebuild.system": system, "rebuild.workload": "finetune", **resource}
        self.provider = MeterProvider(resource=Resource.create(attributes), metric_readers=[reader])
        meter = self.provider.get_meter("trainer")
        self.steps = meter.create_histogram("step-time", unit="ms")
        self.tokens = meter.create_counter("tokens", unit="{token}")
        self.queue = meter.create_gauge("queue-depth", unit="{request}")

    def export(self) -> None:
        assert self.provider.force_flush(timeout_millis=20_000)

    def shutdown(self) -> None:
        self.provider.shutdown()


def comparison(base: str, token: str, **params: str) -> dict:
    response = httpx.get(
        f"{base}/api/v1/comparisons/",
        params={"baseline": "legacy", "candidate": "rebuilt", "workload": "finetune", **params},
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response.json()


def observations(base: str, token: str, metric: str) -> list[dict]:
    response = httpx.get(
        f"{base}/api/v1/observations/",
        params={"source": "otlp", "metric": metric},
        headers={"Authorization": f"Token {token}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response.json()["results"]


def run(url: str, token: str, system: str, batches: list[list[float]], run_id: str = "") -> None:
    """One process per call: each batch recorded, then exported; then the export at shutdown."""
    process = Process(url, token, system, **({"rebuild.run_id": run_id} if run_id else {}))
    try:
        for batch in batches:
            for value in batch:
                process.steps.record(value)
            process.export()
    finally:
        process.shutdown()


def assert_side_matches_numpy(side: dict, values: list[float], accuracy: float | None) -> None:
    x = np.asarray(values)
    assert side["n"] == len(x)
    assert side["mean"] == pytest.approx(x.mean(), rel=1e-12)
    for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
        truth = float(np.quantile(x, q))  # numpy's default is percentile_cont's linear interpolation
        low, high = side["bounds"][name]
        assert low <= truth <= high, (name, truth, low, high)
        assert abs(side[name] - truth) <= (high - low) / 2 + 1e-9
        if accuracy is not None:
            assert abs(side[name] - truth) <= accuracy * abs(truth) + 1e-9
    assert side["bounds"]["min"][0] <= x.min() <= side["bounds"]["min"][1]
    assert side["bounds"]["max"][0] <= x.max() <= side["bounds"]["max"][1]


def test_cumulative_histograms_store_the_recorded_distribution_across_exports(world, live_server):
    token, url = world, f"{live_server.url}/otlp/v1/metrics"
    for system, batches in STEPS.items():
        run(url, token, system, batches)
    # Three exports with news and the one at shutdown repeating the last: three deltas per process.
    assert HistogramPoint.objects.count() == 6
    assert not Observation.objects.exists()  # a histogram is never stored as its mean
    answer = comparison(live_server.url, token, metric="step-time", statistic="p95", min_samples="2")
    assert answer["approximate"] is True
    for side in ("baseline", "candidate"):
        values = recorded(answer[side]["system"])
        assert_side_matches_numpy(answer[side], values, answer["accuracy"])
    # The median's interval reaches the edges of the buckets holding its ranks: it holds the exact
    # order-statistic interval of the recorded values, never narrower.
    median = comparison(live_server.url, token, metric="step-time", statistic="p50", min_samples="2")
    for side in ("baseline", "candidate"):
        x = np.sort(recorded(median[side]["system"]))
        first, last = order_statistic_ranks(len(x), 0.5, 0.05)
        low, high = median[side]["ci"]
        assert low <= x[first - 1] and x[last - 1] <= high


def test_the_issue_example_stores_nine_steps_not_four_running_means(world, live_server):
    token, url = world, f"{live_server.url}/otlp/v1/metrics"
    recorded = [1000.0, 2000.0, 3000.0]
    for system in ("legacy", "rebuilt"):
        run(url, token, system, [recorded, recorded, recorded])
    answer = comparison(live_server.url, token, metric="step-time", statistic="mean", min_samples="2")
    for side in ("baseline", "candidate"):
        assert answer[side]["n"] == 9
        assert answer[side]["mean"] == 2000.0
        assert answer[side]["min"] == 1000.0  # its bucket (750, 1000] narrowed to the recorded min
        assert answer[side]["bounds"]["p50"][0] <= 2000.0 <= answer[side]["bounds"]["p50"][1]


def test_a_restarted_exporter_adds_its_own_points(world, live_server):
    token, url = world, f"{live_server.url}/otlp/v1/metrics"
    first, second = STEPS["rebuilt"][:2], STEPS["rebuilt"][2:]
    run(url, token, "rebuilt", first, run_id="job-1")
    run(url, token, "rebuilt", second, run_id="job-1")  # the same stream restarted: a new start time
    run(url, token, "legacy", STEPS["legacy"], run_id="job-1")
    assert OtlpStream.objects.filter(state__isnull=False).count() == 2
    answer = comparison(live_server.url, token, metric="step-time", statistic="p50", min_samples="2")
    assert_side_matches_numpy(answer["candidate"], recorded("rebuilt"), answer["accuracy"])


def test_counters_store_what_was_added_between_exports_and_gauges_each_reading_once(world, live_server):
    token, url = world, f"{live_server.url}/otlp/v1/metrics"
    for added, depths in (([100, 20], [4.0, 7.0]), ([5], [2.0])):  # two processes: a restart
        process = Process(url, token, "rebuilt", **{"rebuild.run_id": "job-2"})
        try:
            for amount, depth in zip(added, depths, strict=False):
                process.tokens.add(amount)
                process.queue.set(depth)
                process.export()
            process.export()  # nothing new: the counter repeats its total, the gauge its value
        finally:
            process.shutdown()
    tokens = sorted(row["value"] for row in observations(live_server.url, token, "tokens"))
    assert tokens == [5.0, 20.0, 100.0]  # the deltas, not the running totals 100, 120, 120, 5
    depths = [row["value"] for row in observations(live_server.url, token, "queue-depth")]
    assert sorted(depths) == [2.0, 4.0, 7.0]


def test_a_wrong_token_fails_the_export(world, live_server, caplog):
    # The SDK's force_flush() answers True whatever the exporter got; its log says what happened.
    process = Process(f"{live_server.url}/otlp/v1/metrics", "not-a-token", "rebuilt")
    process.steps.record(1.0)
    process.export()
    process.shutdown()
    assert any("code: 401" in record.getMessage() for record in caplog.records)
    assert not HistogramPoint.objects.exists()
