"""Day rollups on real PostgreSQL: maintained through ingest, rebuilt by command, read over the threshold."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from metrics.ingest import observations_ingest_rows
from metrics.models import IngestBatch, Observation, ObservationRollup, RollupStale
from metrics.rollups.maintain import rollups_rebuild
from metrics.rollups.sketch import ACCURACY, GAMMA
from metrics.selectors.comparison import SidesRequest, comparison_compute, sides_fetch_many
from metrics.selectors.comparison.compute import FROM_ROLLUPS, REREAD
from tests.numbers import approx_rows

BOUND = ACCURACY * (1 + 1e-9)
# A bound read to its bucket's edge is at most one bucket (a factor γ) from the value it stands for.
WIDTH = GAMMA - 1 + 1e-9
TODAY = datetime.now(UTC).date()
rng = np.random.default_rng(1414)


def midnight(days_ago: int) -> datetime:
    return datetime.combine(TODAY - timedelta(days=days_ago), time.min, tzinfo=UTC)


def store(ref, values, *, system: str, days_ago: int = 3, workload: str = "medium", spread_days: int = 3):
    """Rows spread evenly over `spread_days` whole days, starting `days_ago` days back at midnight."""
    step = timedelta(days=spread_days) / len(values)
    Observation.objects.bulk_create(
        Observation(
            definition=ref["latency"],
            system=ref[system],
            workload=ref[workload],
            value=float(v),
            unit="s",
            observed_at=midnight(days_ago) + i * step,
            run_id=f"{system}-{workload}-{days_ago}-{i}",
        )
        for i, v in enumerate(values)
    )


# rollup_table()'s columns that are sums of float8 rows (total, m2, sumsq); n, min, max and the bins are exact.
SUMS = (5, 6, 7)


def rollup_table() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT definition_id, system_id, workload_id, day, n, total, m2, sumsq, min, max, zeros, "
            "bins, negative_bins FROM metrics_observationrollup ORDER BY 1, 2, 3, 4"
        )
        return cursor.fetchall()


def raw_day_totals() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT definition_id, system_id, workload_id, (observed_at AT TIME ZONE 'UTC')::date, count(*), "
            "min(value), max(value) FROM metrics_observation GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
        )
        return cursor.fetchall()


def ingest_rows(count: int, *, start: datetime, system: str = "rebuilt", offset: int = 0) -> list[dict]:
    return [
        {
            "metric": "latency",
            "system": system,
            "workload": "finetune",
            "value": 0.1 + (i % 17) * 0.01,
            "unit": "s",
            "observed_at": (start + timedelta(hours=i)).isoformat(),
            "run_id": f"ingest-{offset + i}",
        }
        for i in range(count)
    ]


# --- maintenance ------------------------------------------------------------------------------------


def test_ingest_maintains_the_rollups_it_touched(ref, ingest_user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        observations_ingest_rows(rows=ingest_rows(60, start=midnight(5)), actor=ingest_user)
    batch = IngestBatch.objects.latest("pk")
    assert (batch.observed_from, batch.observed_to) == (midnight(5), midnight(5) + timedelta(hours=59))
    assert [(row[3], row[4]) for row in raw_day_totals()] == [(r[3], r[4]) for r in rollup_table()]
    assert sum(r[4] for r in rollup_table()) == 60
    assert not RollupStale.objects.exists()  # the refresh cleared its marks

    # A second batch into the same days: only those days are recomputed, and match a full rebuild.
    with django_capture_on_commit_callbacks(execute=True):
        observations_ingest_rows(rows=ingest_rows(30, start=midnight(4), offset=100), actor=ingest_user)
    maintained = rollup_table()
    assert sum(r[4] for r in maintained) == 90
    ObservationRollup.objects.all().delete()
    rollups_rebuild()
    # The float sums follow each recompute's scan order, which the refresh and the rebuild need not share.
    assert rollup_table() == approx_rows(maintained, sums=SUMS)


def test_refresh_is_idempotent_and_leaves_untouched_days_alone(ref):
    store(ref, rng.lognormal(0, 1, 300), system="legacy", days_ago=6)
    rollups_rebuild()
    before = {row.day: row.refreshed_at for row in ObservationRollup.objects.all()}
    RollupStale.objects.create(
        definition_id=ref["latency"].pk, workload_id=ref["medium"].pk, day=TODAY - timedelta(days=5)
    )
    from metrics.tasks import rollups_refresh

    assert rollups_refresh() == 1
    after = {row.day: row.refreshed_at for row in ObservationRollup.objects.all()}
    assert before.keys() == after.keys()
    changed = [day for day in before if before[day] != after[day]]
    assert changed == [TODAY - timedelta(days=5)]
    assert rollups_refresh() == 0


def test_rebuild_command(ref):
    store(ref, rng.uniform(1, 2, 90), system="legacy", days_ago=9)
    store(ref, rng.uniform(1, 2, 90), system="rebuilt", days_ago=9)
    call_command("rollups_rebuild", "--metric", "latency", "--since", str(TODAY - timedelta(days=7)))
    assert sorted({r[3] for r in rollup_table()}) == [TODAY - timedelta(days=d) for d in (7,)]
    call_command("rollups_rebuild")
    assert [(r[3], r[4], r[5], r[6]) for r in raw_day_totals()] == [
        (r[3], r[4], r[8], r[9]) for r in rollup_table()
    ]
    with pytest.raises(CommandError, match="--since"):
        call_command("rollups_rebuild", "--since", "yesterday")
    with pytest.raises(CommandError, match="--metric"):
        call_command("rollups_rebuild", "--metric", "nope")


# --- the read path ----------------------------------------------------------------------------------


SHAPES = {
    "lognormal": lambda n, k: rng.lognormal(0, 0.8, n) * k,
    "bimodal": lambda n, k: np.concatenate([rng.normal(2, 0.1, n // 2), rng.normal(6, 0.3, n - n // 2)]) * k,
    "uniform": lambda n, k: rng.uniform(1, 1.5, n) * k,
    "heavy tail": lambda n, k: (rng.pareto(1.5, n) + 1) * k,
    "ties": lambda n, k: rng.integers(1, 6, n).astype(float) * k,
}


def compare(ref, statistic: str, **window):
    return comparison_compute(
        definition=ref["latency"],
        baseline=ref["legacy"],
        candidate=ref["rebuilt"],
        statistic=statistic,
        **window,
    )


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("shift", [1.0, 0.9])
def test_rollup_answers_match_the_exact_ones_within_the_bound(ref, settings, shape, shift):
    store(ref, SHAPES[shape](3000, 1.0), system="legacy")
    store(ref, SHAPES[shape](2000, shift), system="rebuilt")
    rollups_rebuild()
    for statistic in ("p50", "p95", "p99", "mean", "distribution"):
        settings.ROLLUP_THRESHOLD = 200_000
        exact = compare(ref, statistic)
        settings.ROLLUP_THRESHOLD = 1000
        approx = compare(ref, statistic)
        assert (approx.baseline.n, approx.candidate.n) == (3000, 2000)
        assert not exact.approximate
        if not approx.approximate:  # the buckets could not tell: the rows answered, exactly
            assert approx.method.endswith(REREAD) and approx.verdict == exact.verdict
            continue
        assert approx.accuracy == ACCURACY and approx.method.endswith(FROM_ROLLUPS)
        for a, e in ((approx.baseline, exact.baseline), (approx.candidate, exact.candidate)):
            for name in ("p50", "p90", "p95", "p99", "min", "max", "value"):
                assert abs(getattr(a, name) - getattr(e, name)) <= BOUND * abs(getattr(e, name)), (
                    statistic,
                    name,
                )
            assert a.mean == pytest.approx(e.mean, rel=1e-12)
            if e.ci and statistic == "mean":  # exact moments: the exact interval
                assert a.ci == pytest.approx(e.ci, rel=1e-9)
            elif e.ci:  # to the buckets' edges: containing the exact interval, at most a bucket wider
                assert a.ci[0] <= e.ci[0] and a.ci[1] >= e.ci[1], (statistic, a.ci, e.ci)
                assert all(abs(x - y) <= WIDTH * abs(y) for x, y in zip(a.ci, e.ci, strict=True))
        if statistic == "distribution":
            assert approx.effect_size == pytest.approx(exact.effect_size, abs=0.01)
        elif exact.relative_performance_ci:
            low, high = exact.relative_performance_ci
            assert approx.relative_performance_ci[0] <= low * (1 + 1e-9)
            assert approx.relative_performance_ci[1] >= high * (1 - 1e-9)
            assert approx.verdict == exact.verdict, (statistic, exact.reason, approx.reason)
        if shift == 0.9 and shape in ("lognormal", "uniform") and statistic in ("p50", "mean"):
            assert approx.verdict == exact.verdict == "better"


def test_below_the_threshold_the_answer_stays_exact(ref, settings):
    store(ref, rng.lognormal(0, 1, 500), system="legacy")
    store(ref, rng.lognormal(0, 1, 500), system="rebuilt")
    rollups_rebuild()
    settings.ROLLUP_THRESHOLD = 500  # not more than it: exact
    assert compare(ref, "p95").approximate is False
    settings.ROLLUP_THRESHOLD = 499
    assert compare(ref, "p95").approximate is True


def test_an_approximate_window_reads_its_partial_edge_days_from_the_rows(ref, settings):
    settings.ROLLUP_THRESHOLD = 10
    store(ref, np.full(300, 1.0), system="legacy", days_ago=3)  # 100 a day over 3 days
    store(ref, np.full(300, 2.0), system="rebuilt", days_ago=3)
    rollups_rebuild()
    since, until = midnight(3) + timedelta(hours=6), midnight(0) + timedelta(hours=1)
    result = compare(ref, "p50", since=since, until=until)
    assert result.approximate
    assert (result.since, result.until) == (since, until)  # the window asked, edges and all
    assert (result.baseline.n, result.candidate.n) == (275, 275)  # 75 of the first day's 100 rows


def test_the_api_says_approximate_and_the_bound(ref, settings, viewer, client):
    settings.ROLLUP_THRESHOLD = 10
    store(ref, rng.lognormal(0, 1, 100), system="legacy")
    store(ref, rng.lognormal(0, 1, 100), system="rebuilt")
    rollups_rebuild()
    client.force_login(viewer)
    body = client.get("/api/v1/comparisons/?metric=latency&baseline=legacy&candidate=rebuilt").json()
    assert (body["approximate"], body["accuracy"]) == (True, ACCURACY)
    settings.ROLLUP_THRESHOLD = 1000
    body = client.get("/api/v1/comparisons/?metric=latency&baseline=legacy&candidate=rebuilt").json()
    assert (body["approximate"], body["accuracy"]) == (False, None)


def test_batched_sides_mix_rollups_and_exact_reads(ref, settings, django_assert_num_queries):
    settings.ROLLUP_THRESHOLD = 150
    store(ref, rng.lognormal(0, 1, 300), system="legacy", workload="medium")
    store(ref, rng.lognormal(0, 1, 300), system="rebuilt", workload="medium")
    store(ref, rng.lognormal(0, 1, 60), system="legacy", workload="large")
    store(ref, rng.lognormal(0, 1, 60), system="rebuilt", workload="large")
    rollups_rebuild()
    requests = [
        SidesRequest(ref["latency"].pk, ref["medium"].pk),
        SidesRequest(ref["latency"].pk, ref["large"].pk),
        SidesRequest(ref["latency"].pk, ref["medium"].pk, since=midnight(1)),  # 100 a side: exact
    ]
    with django_assert_num_queries(3):
        sides = sides_fetch_many(requests, baseline=ref["legacy"], candidate=ref["rebuilt"])
    assert [(b.approximate, c.approximate) for b, c in sides] == [
        (True, True),
        (False, False),
        (False, False),
    ]
    assert [b.stats.n for b, _ in sides] == [300, 60, 100]


def test_charts_read_each_days_exact_median_from_the_rollups(ref):
    from metrics.selectors.registry import series_daily

    values = rng.lognormal(0, 1, 301)
    store(ref, values, system="rebuilt", days_ago=3, spread_days=3)
    rollups_rebuild(definition_ids=[ref["latency"].pk])
    step = 3 / len(values)
    expected = [
        float(np.median([v for i, v in enumerate(values) if int(i * step) == day])) for day in range(3)
    ]
    points = series_daily(ref["latency"])["finetune"]["rebuilt"]
    assert [n for _, _, n in points] == [
        sum(1 for i in range(len(values)) if int(i * step) == d) for d in range(3)
    ]
    assert [median for _, median, _ in points] == pytest.approx(expected, rel=1e-12)
    # A day written before medians were kept still charts, from its sketch, within the sketch's accuracy.
    ObservationRollup.objects.update(median=None)
    fallback = [median for _, median, _ in series_daily(ref["latency"])["finetune"]["rebuilt"]]
    assert all(abs(a / b - 1) <= BOUND for a, b in zip(fallback, expected, strict=True))
