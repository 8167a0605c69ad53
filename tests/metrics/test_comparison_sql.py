"""sides_fetch: each side's sample in one read, sorted once, with PostgreSQL's own figures."""

from __future__ import annotations

import random
from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from metrics.models import Observation
from metrics.selectors.comparison.sql import sides_fetch

# What the comparison ran before it read the samples itself: the figures must not move.
POSTGRES_STATS = """
SELECT system_id, count(*), avg(value),
       percentile_cont(ARRAY[0.5, 0.9, 0.95, 0.99]) WITHIN GROUP (ORDER BY value), min(value), max(value)
FROM metrics_observation WHERE definition_id = %s AND system_id IN (%s, %s) GROUP BY system_id
"""


def add(ref, system, values):
    start = timezone.now() - timedelta(days=1)
    Observation.objects.bulk_create(
        Observation(
            definition=ref["latency"],
            system=ref[system],
            workload=ref["medium"],
            value=value,
            unit="s",
            observed_at=start + timedelta(seconds=i),
            run_id=f"{system}-{i}",
        )
        for i, value in enumerate(values)
    )


@pytest.mark.parametrize("sizes", [(1, 2), (3, 7), (101, 250), (997, 1000)])
def test_statistics_are_postgres_percentile_cont_to_the_last_bit(ref, sizes):
    rng = random.Random(sum(sizes))
    # Few distinct values give ties; the lognormal tail gives quantiles between far-apart rows.
    add(ref, "legacy", [round(rng.lognormvariate(0, 1), 1) for _ in range(sizes[0])])
    add(ref, "rebuilt", [rng.lognormvariate(0, 1) * 1e3 for _ in range(sizes[1])])
    with connection.cursor() as cursor:
        cursor.execute(POSTGRES_STATS, [ref["latency"].pk, ref["legacy"].pk, ref["rebuilt"].pk])
        expected = {row[0]: row for row in cursor.fetchall()}
    sides = sides_fetch(definition=ref["latency"], baseline=ref["legacy"], candidate=ref["rebuilt"])
    for system, side in zip(("legacy", "rebuilt"), sides, strict=True):
        _, n, mean, (p50, p90, p95, p99), low, high = expected[ref[system].pk]
        stats = side.stats
        # Exactly equal: the same interpolation on the same doubles.
        assert (stats.n, stats.p50, stats.p90, stats.p95, stats.p99) == (n, p50, p90, p95, p99)
        assert (stats.min, stats.max) == (low, high)
        # PostgreSQL's avg in both reads; its sum follows the scan order, which the plan may change.
        assert stats.mean == pytest.approx(mean, rel=1e-14)


def test_samples_come_back_sorted_once_in_full(ref):
    legacy = [3.0, 1.0, 2.0, 2.0]
    add(ref, "legacy", legacy)
    baseline, _ = sides_fetch(definition=ref["latency"], baseline=ref["legacy"], candidate=ref["rebuilt"])
    assert baseline.sample.dtype == np.float64
    assert baseline.sample.tolist() == sorted(legacy)
    assert baseline.stats.system == "legacy" and baseline.stats.n == 4


def test_a_side_without_observations_has_no_statistics(ref):
    add(ref, "legacy", [1.0, 2.0])
    _, candidate = sides_fetch(definition=ref["latency"], baseline=ref["legacy"], candidate=ref["rebuilt"])
    assert candidate.stats.n == 0 and candidate.sample.size == 0
    assert {candidate.stats.statistic(name) for name in ("mean", "p50", "p99", "min", "max")} == {None}
