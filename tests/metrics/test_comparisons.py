"""GET /api/v1/comparisons/ and the statistics behind it."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone
from scipy.stats import mannwhitneyu

from metrics.models import Observation
from metrics.selectors import comparison_compute
from tests.metrics.factories import definition

URL = "/api/v1/comparisons/"


def add(ref, system, values, *, metric="latency", workload="medium", start=None):
    start = start or timezone.now() - timedelta(days=1)
    Observation.objects.bulk_create(
        Observation(
            definition=ref[metric],
            system=ref[system],
            workload=ref[workload],
            value=value,
            unit="s",
            observed_at=start + timedelta(seconds=i),
            run_id=f"{system}-{i}",
        )
        for i, value in enumerate(values)
    )


def test_statistics_and_mann_whitney_match_scipy(ref):
    rng = random.Random(7)
    # Rounded values give ties, which the rank computation must handle like scipy does.
    legacy = [round(rng.gauss(1.0, 0.2), 2) for _ in range(300)]
    rebuilt = [round(rng.gauss(0.93, 0.2), 2) for _ in range(280)]
    add(ref, "legacy", legacy)
    add(ref, "rebuilt", rebuilt)
    result = comparison_compute(definition=ref["latency"], baseline=ref["legacy"], candidate=ref["rebuilt"])
    expected = mannwhitneyu(rebuilt, legacy, method="asymptotic", use_continuity=True)
    assert result.u_statistic == pytest.approx(expected.statistic)
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-9)
    assert result.baseline.n == 300 and result.candidate.n == 280
    assert result.baseline.mean == pytest.approx(sum(legacy) / 300)
    assert result.baseline.min == min(legacy) and result.candidate.max == max(rebuilt)


def test_lower_is_better_ratio_is_direction_aware(as_user, viewer, ref):
    add(ref, "legacy", [1.0 + i * 1e-3 for i in range(50)])
    add(ref, "rebuilt", [0.5 + i * 1e-3 for i in range(50)])
    body = (
        as_user(viewer).get(URL, {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt"}).json()
    )
    assert body["statistic"] == "p50"
    assert body["relative_performance"] == pytest.approx(1.0245 / 0.5245, rel=1e-3)
    assert body["change_pct"] < 0  # the value dropped …
    assert body["improvement_pct"] > 0  # … which is an improvement for latency
    assert body["verdict"] == "better"


def test_higher_is_better_worse_candidate(as_user, viewer, ref):
    ref["tput"] = definition(key="tput", unit="token/s", direction="higher_is_better", statistic="mean")
    add(ref, "legacy", [100.0 + i % 7 for i in range(40)], metric="tput")
    add(ref, "rebuilt", [70.0 + i % 7 for i in range(40)], metric="tput")
    body = as_user(viewer).get(URL, {"metric": "tput@1", "baseline": "legacy", "candidate": "rebuilt"}).json()
    assert body["relative_performance"] == pytest.approx(73 / 103, rel=0.01)
    assert body["verdict"] == "worse"
    assert body["significant"] is True


def test_indistinguishable_samples_are_no_difference(as_user, viewer, ref):
    rng = random.Random(3)
    add(ref, "legacy", [rng.gauss(1, 0.1) for _ in range(200)])
    add(ref, "rebuilt", [rng.gauss(1, 0.1) for _ in range(200)])
    body = (
        as_user(viewer).get(URL, {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt"}).json()
    )
    assert body["verdict"] == "no_difference"


def test_too_few_samples_is_insufficient_data(as_user, viewer, ref):
    add(ref, "legacy", [1.0] * 29)
    add(ref, "rebuilt", [0.1] * 100)
    body = (
        as_user(viewer).get(URL, {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt"}).json()
    )
    assert body["verdict"] == "insufficient_data"
    assert "29" in body["reason"]


def test_workload_and_window_filters(as_user, viewer, ref):
    old = timezone.now() - timedelta(days=10)
    add(ref, "legacy", [1.0] * 40, workload="large", start=old)
    add(ref, "legacy", [2.0] * 30)
    client = as_user(viewer)
    params = {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt"}
    assert client.get(URL, {**params, "workload": "pretrain"}).json()["baseline"]["n"] == 40
    since = (timezone.now() - timedelta(days=2)).isoformat()
    assert client.get(URL, {**params, "since": since}).json()["baseline"]["n"] == 30


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({"baseline": "mainframe"}, 400, "baseline"),
        ({"candidate": "legacy"}, 400, "candidate"),
        ({"metric": "nope"}, 404, "metric"),
        ({"metric": "latency@x"}, 400, "metric"),
        ({"workload": "nope"}, 400, "workload"),
        ({"statistic": "p42"}, 400, "statistic"),
        ({"alpha": "nan"}, 400, "alpha"),
        ({"since": "2026-11-02T00:00:00Z", "until": "2026-11-01T00:00:00Z"}, 400, "until"),
    ],
)
def test_bad_queries_are_4xx_naming_the_field(as_user, viewer, ref, params, status, field):
    query = {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt", **params}
    response = as_user(viewer).get(URL, query)
    assert response.status_code == status
    assert field in [error["field"] for error in response.json()["errors"]]


def test_comparing_across_versions_is_refused_with_why(as_user, viewer, ref):
    definition(key="latency", version=2, status="draft", excludes=["queueing"])
    response = as_user(viewer).get(
        URL,
        {
            "metric": "latency@1",
            "candidate_metric": "latency@2",
            "baseline": "legacy",
            "candidate": "rebuilt",
        },
    )
    assert response.status_code == 400
    assert "different versions" in response.json()["detail"]
    assert "excludes" in response.json()["detail"]
