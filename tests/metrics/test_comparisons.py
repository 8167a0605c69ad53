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


def test_distribution_is_one_sided_mann_whitney_matching_scipy(ref):
    rng = random.Random(7)
    # Rounded values give ties, which the rank computation must handle like scipy does.
    legacy = [round(rng.gauss(1.0, 0.2), 2) for _ in range(300)]
    rebuilt = [round(rng.gauss(0.93, 0.2), 2) for _ in range(280)]
    add(ref, "legacy", legacy)
    add(ref, "rebuilt", rebuilt)
    result = comparison_compute(
        definition=ref["latency"], baseline=ref["legacy"], candidate=ref["rebuilt"], statistic="distribution"
    )
    # Latency: lower is better, so "the candidate is better" is the alternative "less".
    expected = mannwhitneyu(rebuilt, legacy, method="asymptotic", alternative="less")
    assert result.method == "mann-whitney"
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-9)
    assert result.relative_performance_ci is None
    assert result.verdict == "better"
    assert result.baseline.n == 300 and result.candidate.n == 280
    assert result.baseline.mean == pytest.approx(sum(legacy) / 300)
    assert result.baseline.min == min(legacy) and result.candidate.max == max(rebuilt)


def test_answer_carries_intervals_method_and_one_sided_p(as_user, viewer, ref):
    rng = random.Random(5)
    add(ref, "legacy", [rng.gauss(1.0, 0.1) for _ in range(400)])
    add(ref, "rebuilt", [rng.gauss(0.8, 0.1) for _ in range(400)])
    body = (
        as_user(viewer)
        .get(URL, {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt", "statistic": "p95"})
        .json()
    )
    assert body["method"] == "order-statistic"
    low, high = body["relative_performance_ci"]
    assert low <= body["relative_performance"] <= high and low > 1
    for side in ("baseline", "candidate"):
        side_low, side_high = body[side]["ci"]
        assert side_low <= body[side]["p95"] == body[side]["value"] <= side_high
    assert 0 <= body["p_value"] < 1e-6
    assert body["verdict"] == "better"


def test_median_worse_and_p99_better_are_judged_each_on_its_own(as_user, viewer, ref):
    """The issue's case: a slower body with a shorter tail (lower is better)."""
    rng = random.Random(11)
    # Baseline: median ≈ 281 s with a long tail (p99 ≈ 687 s); candidate: median ≈ 329 s, p99 ≈ 370 s.
    add(ref, "legacy", [281 * rng.lognormvariate(0, 0.384) for _ in range(3000)])
    add(ref, "rebuilt", [rng.gauss(329, 18) for _ in range(3000)])
    client = as_user(viewer)
    params = {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt"}
    p50 = client.get(URL, {**params, "statistic": "p50"}).json()
    p99 = client.get(URL, {**params, "statistic": "p99"}).json()
    assert p50["verdict"] == "worse" and p50["relative_performance_ci"][1] < 1
    assert p99["verdict"] == "better" and p99["relative_performance_ci"][0] > 1
    assert p50["p_value"] > 0.99 and p99["p_value"] < 1e-6  # one-sided, each on its own statistic
    distribution = client.get(URL, {**params, "statistic": "distribution"}).json()
    assert distribution["verdict"] == "worse"  # the candidate is stochastically slower


def test_min_and_max_carry_no_inference(as_user, viewer, ref):
    add(ref, "legacy", [1.0 + i * 1e-3 for i in range(50)])
    add(ref, "rebuilt", [0.5 + i * 1e-3 for i in range(50)])
    body = (
        as_user(viewer)
        .get(URL, {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt", "statistic": "max"})
        .json()
    )
    assert (body["method"], body["p_value"], body["relative_performance_ci"]) == ("none", None, None)
    assert body["baseline"]["ci"] is None
    assert body["verdict"] == "insufficient_data"
    assert body["reason"] == "no inference for max."


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
    assert body["method"] == "welch-fieller" and body["significant"] is True
    assert body["relative_performance_ci"][1] < 1


def test_indistinguishable_samples_are_no_difference(as_user, viewer, ref):
    rng = random.Random(3)
    values = [rng.gauss(1, 0.1) for _ in range(200)]
    add(ref, "legacy", values)
    add(ref, "rebuilt", rng.sample(values, len(values)))  # the same values in another order
    body = (
        as_user(viewer).get(URL, {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt"}).json()
    )
    assert body["verdict"] == "no_difference" and body["significant"] is False


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
        ({"metric": "nope"}, 400, "metric"),  # a query parameter: bad input, not a missing page
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
