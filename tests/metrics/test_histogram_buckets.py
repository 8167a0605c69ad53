"""Comparison sides with histogram buckets (metrics.rollups.buckets, comparison.histograms), against numpy."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone
from opentelemetry.proto.metrics.v1.metrics_pb2 import HistogramDataPoint, Metric
from rest_framework.test import APIClient

from metrics.inference import infer, order_statistic_ranks
from metrics.models import Observation
from metrics.rollups.buckets import Buckets
from metrics.selectors.comparison.batch import SidesRequest, sides_fetch_many
from tests.conftest import api_token
from tests.metrics.test_otlp_receiver import NOW_NS, START_NS, answer, export, post

BOUNDS = [0.1, 0.2, 0.3, 0.5, 0.8, 1.3, 2.1]


def bucketed(values: np.ndarray, bounds: list[float]) -> Buckets:
    """The buckets an explicit histogram with these bounds holds for the values, narrowed to min/max."""
    edges = [-np.inf, *bounds, np.inf]
    index = np.searchsorted(bounds, values, side="left")  # OTLP: bucket i holds (b[i-1], b[i]]
    buckets = Buckets()
    counts = np.bincount(index, minlength=len(edges) - 1)
    kept = [i for i, c in enumerate(counts) if c]
    lows = [max(edges[i], values.min()) for i in kept]
    highs = [min(edges[i + 1], values.max()) for i in kept]
    buckets.add_point(float(values.sum()), lows, highs, [int(counts[i]) for i in kept])
    return buckets


@pytest.mark.parametrize("seed", range(5))
def test_every_rank_lies_in_its_bracket_and_intervals_hold_the_exact_ones(seed):
    rng = np.random.default_rng(seed)
    values = rng.lognormal(-0.7, 0.6, 400)
    exact = rng.lognormal(-0.5, 0.5, 30)  # rows beside the histogram points
    buckets = bucketed(values, BOUNDS)
    buckets.add_values(exact)
    truth = np.sort(np.concatenate([values, exact]))
    assert len(buckets) == len(truth)
    assert buckets.moments.mean == pytest.approx(truth.mean(), rel=1e-12)
    for rank in range(len(truth)):
        low, high = buckets.bracket(rank)
        assert low <= truth[rank] <= high
    for q in (0.5, 0.9, 0.95, 0.99):
        low, high = buckets.bound(q)
        assert low <= np.quantile(truth, q) <= high
        first, last = order_statistic_ranks(len(truth), q, 0.05)
        ci = infer(
            statistic=f"p{round(q * 100)}", direction="lower_is_better", baseline=buckets, candidate=buckets
        ).baseline.ci
        assert ci[0] <= truth[first - 1] and truth[last - 1] <= ci[1]


@pytest.fixture
def token(ref, ingest_user) -> str:
    return api_token(ingest_user, "ingest", "read")


def test_a_side_with_histograms_against_one_of_rows_compares_every_statistic(ref, token):
    rng = np.random.default_rng(7)
    metric = Metric(name="latency", unit="s")
    recorded = []
    for i in range(3):  # three delta points of the legacy system
        values = rng.lognormal(-0.7, 0.5, 60)
        recorded += values.tolist()
        counts = np.bincount(np.searchsorted(BOUNDS, values, side="left"), minlength=len(BOUNDS) + 1)
        metric.histogram.aggregation_temporality = 1
        metric.histogram.data_points.append(
            HistogramDataPoint(
                count=len(values),
                sum=float(values.sum()),
                min=float(values.min()),
                max=float(values.max()),
                bucket_counts=counts.tolist(),
                explicit_bounds=BOUNDS,
                start_time_unix_nano=START_NS + i,
                time_unix_nano=NOW_NS - (3 - i) * 10**9,
            )
        )
    assert not answer(post(export(metric, rebuild__system="legacy"), token)).HasField("partial_success")
    now = timezone.now()
    rows = rng.lognormal(-0.9, 0.5, 120)
    Observation.objects.bulk_create(
        Observation(
            definition=ref["latency"],
            system=ref["rebuilt"],
            workload=ref["medium"],
            value=float(v),
            unit="s",
            observed_at=now - timedelta(seconds=i + 1),
        )
        for i, v in enumerate(rows)
    )
    since = (now - timedelta(hours=2)).isoformat()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    for statistic in ("p50", "p95", "mean", "distribution", "min", "max"):
        response = client.get(
            "/api/v1/comparisons/",
            {
                "metric": "latency",
                "baseline": "legacy",
                "candidate": "rebuilt",
                "statistic": statistic,
                "since": since,
            },
        )
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["approximate"] is True
        assert body["since"].startswith(since[:19])  # the asked window: no whole-day rounding
        assert body["baseline"]["n"] == 180 and body["candidate"]["n"] == 120
        assert body["baseline"]["mean"] == pytest.approx(np.mean(recorded), rel=1e-12)
        assert body["candidate"]["mean"] == pytest.approx(rows.mean(), rel=1e-12)
        low, high = body["baseline"]["bounds"]["p95"]
        assert low <= np.quantile(recorded, 0.95) <= high
        assert body["candidate"]["p50"] == pytest.approx(np.quantile(rows, 0.5))  # rows stay exact


def test_the_batched_reader_of_gates_reads_histogram_points_too(ref, token):
    metric = Metric(name="latency", unit="s")
    metric.histogram.data_points.append(
        HistogramDataPoint(
            count=40,
            sum=20.0,
            bucket_counts=[0, 0, 0, 10, 30],
            explicit_bounds=BOUNDS[:4],
            start_time_unix_nano=START_NS,
            time_unix_nano=NOW_NS,
        )
    )
    answer(post(export(metric, rebuild__system="legacy"), token))
    ((base, cand),) = sides_fetch_many(
        [SidesRequest(ref["latency"].pk, ref["medium"].pk)], baseline=ref["legacy"], candidate=ref["rebuilt"]
    )
    assert (base.stats.n, base.stats.mean, cand.stats.n) == (40, 0.5, 0)
    assert base.stats.bounds["p50"] == (0.5, float("inf"))  # no max sent: the last bucket is open
