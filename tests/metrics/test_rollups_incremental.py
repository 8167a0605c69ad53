"""Incremental rollups (metrics.rollups.incremental): a batch adds its own rows to the days it touched.

They must equal a full recompute after any mix of batches (repeats, concurrent ones into one day), and
the follow-up must read the batch's deltas, never the day's rows.
"""

from __future__ import annotations

import math
import threading
from datetime import UTC, datetime, time, timedelta

import numpy as np
import pytest
from django.db import connection, transaction

from core.citus import citus_mode
from metrics.ingest import observations_ingest_rows
from metrics.models import Observation, ObservationRollup, RollupDelta
from metrics.rollups.incremental import rollups_pending, rollups_wait_fresh
from metrics.rollups.maintain import rollups_mark_stale, rollups_medians_recompute, rollups_rebuild
from metrics.rollups.sketch import ACCURACY
from metrics.tasks import rollups_refresh
from tests.metrics.factories import reference_data

TODAY = datetime.now(UTC).date()
DAY = datetime.combine(TODAY - timedelta(days=4), time.min, tzinfo=UTC)  # a whole day, four days back
rng = np.random.default_rng(2727)


def rows(
    values, *, run: str, start: datetime = DAY, step: timedelta = timedelta(seconds=7), system="rebuilt"
):
    return [
        {
            "metric": "latency",
            "system": system,
            "workload": "finetune",
            "value": float(v),
            "unit": "s",
            "observed_at": (start + i * step).isoformat(),
            "run_id": f"{run}-{i}",
        }
        for i, v in enumerate(values)
    ]


def mixed(n: int) -> np.ndarray:
    """Mostly lognormal, with zeros and negative values, so every bucket kind is exercised."""
    values = rng.lognormal(0, 1, n)
    values[::11] = 0.0
    values[::13] *= -0.5
    return values


def rollups() -> dict[tuple, dict]:
    return {
        (r.definition_id, r.system_id, r.workload_id, r.day): {
            "n": r.n,
            "total": r.total,
            "m2": r.m2,
            "sumsq": r.sumsq,
            "min": r.min,
            "max": r.max,
            "zeros": r.zeros,
            "bins": r.bins,
            "negative_bins": r.negative_bins,
        }
        for r in ObservationRollup.objects.all()
    }


def assert_equal_to_a_full_recompute() -> None:
    assert rollups_pending() == 0
    incremental = rollups()
    ObservationRollup.objects.all().delete()
    rollups_rebuild()
    recomputed = rollups()
    assert incremental.keys() == recomputed.keys()
    for key, expected in recomputed.items():
        got = incremental[key]
        for exact in ("n", "zeros", "min", "max", "bins", "negative_bins"):
            assert got[exact] == expected[exact], (key, exact)
        for summed in ("total", "m2", "sumsq"):
            assert math.isclose(got[summed], expected[summed], rel_tol=1e-9), (key, summed)
    assert sum(r["n"] for r in recomputed.values()) == Observation.objects.count()


def test_batches_and_repeats_fold_into_what_a_recompute_gives(ref, ingest_user):
    first = rows(mixed(400), run="a")
    # Spans midnight: one delta per day, for two systems.
    across = rows(mixed(300), run="b", start=DAY + timedelta(hours=23), step=timedelta(seconds=20))
    across += rows(mixed(150), run="c", system="legacy", start=DAY + timedelta(hours=22))
    assert observations_ingest_rows(rows=first, actor=ingest_user).inserted == 400
    assert RollupDelta.objects.count() == 1
    rollups_refresh()  # a fold into no rollup yet
    assert observations_ingest_rows(rows=across, actor=ingest_user).inserted == 450
    assert RollupDelta.objects.count() == 3
    # Half repeats of the first batch (the merge path): only the 100 new rows count.
    repeats = first[:200] + rows(mixed(100), run="d", start=DAY + timedelta(hours=5))
    assert observations_ingest_rows(rows=repeats, actor=ingest_user).inserted == 100
    assert observations_ingest_rows(rows=across, actor=ingest_user).inserted == 0  # all repeats
    assert sorted(RollupDelta.objects.values_list("n", flat=True)) == [100, 120, 150, 180]
    rollups_refresh()  # folds into existing rollups and makes new ones
    assert RollupDelta.objects.count() == 0
    assert_equal_to_a_full_recompute()


def test_a_correction_recomputes_the_day_and_drops_the_deltas_its_rows_include(ref, ingest_user):
    observations_ingest_rows(rows=rows(mixed(200), run="a"), actor=ingest_user)
    rollups_refresh()
    observations_ingest_rows(rows=rows(mixed(50), run="b", start=DAY + timedelta(hours=3)), actor=ingest_user)
    # A withdrawn run: delete + mark, as metrics.services.withdraw does; the day's delta is still pending.
    Observation.objects.filter(run_id__startswith="a-", run_id__lt="a-5").delete()
    rollups_mark_stale(
        definition_ids=[ref["latency"].pk], workload_ids=[ref["medium"].pk], start=DAY, end=DAY
    )
    rollups_refresh()
    assert RollupDelta.objects.count() == 0  # in the recomputed rows already: not added twice
    assert_equal_to_a_full_recompute()


def _observation_reads() -> int:
    """Scans this transaction started on the observation table and its partitions, and tuples they read."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0) + coalesce(seq_tup_read, 0)
                                + coalesce(idx_tup_fetch, 0)), 0)
            FROM pg_stat_xact_user_tables
            WHERE relid = 'metrics_observation'::regclass
               OR relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'metrics_observation'::regclass)
            """
        )
        return int(cursor.fetchone()[0])


def _stored_day(ref, count: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at,
                                             run_id, source, tags)
            SELECT %s, %s, %s, 1 + (i %% 97) / 10.0, 's', %s + i * interval '1 second', 'stored-' || i, '', '{}'
            FROM generate_series(0, %s - 1) AS i
            """,
            [ref["latency"].pk, ref["rebuilt"].pk, ref["medium"].pk, DAY, count],
        )
    rollups_rebuild()


@pytest.mark.postgresql_only(
    reason="counts reads in this session's statistics; on Citus the shards are read by worker sessions"
)
def test_the_follow_up_reads_the_batch_not_the_day(ref, ingest_user):
    _stored_day(ref, 20_000)
    batch = rows(mixed(50), run="new", start=DAY + timedelta(hours=7))
    observations_ingest_rows(rows=batch, actor=ingest_user)
    observations_ingest_rows(rows=batch[:20] + rows(mixed(10), run="more", start=DAY), actor=ingest_user)
    before = _observation_reads()
    assert rollups_refresh() == 1  # one series-day folded
    assert _observation_reads() == before  # not one scan of the day's 20,000 rows
    assert RollupDelta.objects.count() == 0
    # A correction of the same day does read it (what the measure above would have caught).
    rollups_mark_stale(
        definition_ids=[ref["latency"].pk], workload_ids=[ref["medium"].pk], start=DAY, end=DAY
    )
    rollups_refresh()
    assert _observation_reads() >= before + 20_060
    assert_equal_to_a_full_recompute()


def test_folding_leaves_the_charts_the_buckets_median_until_the_nightly_recompute(ref, ingest_user):
    from metrics.selectors.registry import series_daily

    values = rng.lognormal(0, 1, 301)
    observations_ingest_rows(rows=rows(values[:200], run="a"), actor=ingest_user)
    observations_ingest_rows(
        rows=rows(values[200:], run="b", start=DAY + timedelta(hours=1)), actor=ingest_user
    )
    rollups_refresh()
    assert ObservationRollup.objects.get().median is None
    [(_, charted, n)] = series_daily(ref["latency"])["finetune"]["rebuilt"]
    exact = float(np.median(values))
    assert n == 301 and abs(charted / exact - 1) <= ACCURACY * (1 + 1e-9)
    assert rollups_medians_recompute(before=DAY.date()) == 0  # only days before `before`
    assert rollups_medians_recompute(before=TODAY) == 1
    assert ObservationRollup.objects.get().median == pytest.approx(exact, rel=1e-12)
    assert rollups_medians_recompute(before=TODAY) == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_batches_into_one_day_and_a_refresh_meanwhile_equal_a_recompute(ingest_user):
    """A holds its batch uncommitted; B repeats part of it (and waits on A's keys, then merges); C
    writes other rows of the day; a correction's recompute and a fold run while all three are in flight."""
    ref = reference_data()
    batch_a = rows(mixed(300), run="a", start=DAY + timedelta(hours=2))
    batch_b = batch_a[100:200] + rows(mixed(120), run="b", start=DAY + timedelta(hours=9))
    batch_c = rows(mixed(80), run="c", start=DAY + timedelta(hours=15))
    observations_ingest_rows(rows=rows(mixed(60), run="before"), actor=ingest_user)
    a_written, release, errors, inserted = threading.Event(), threading.Event(), [], {}

    def ingest(name, batch, hold=False):
        try:
            with transaction.atomic():
                inserted[name] = observations_ingest_rows(rows=batch, actor=ingest_user).inserted
                if hold:
                    a_written.set()
                    assert release.wait(30)
        except Exception as exc:  # reported by the assertion below
            errors.append(exc)
            a_written.set()
        finally:
            connection.close()

    threads = [threading.Thread(target=ingest, args=("a", batch_a, True))]
    threads[0].start()
    assert a_written.wait(30)
    threads += [threading.Thread(target=ingest, args=(n, b)) for n, b in (("b", batch_b), ("c", batch_c))]
    [t.start() for t in threads[1:]]
    # B waits on A's uncommitted rows; C, written, on the refresh message A's batch holds (core.outbox).
    assert _waiting_for_locks(2)
    rollups_mark_stale(
        definition_ids=[ref["latency"].pk], workload_ids=[ref["medium"].pk], start=DAY, end=DAY
    )
    rollups_refresh()  # sees none of the three: their rows and deltas are not committed
    release.set()
    [t.join(30) for t in threads]
    assert errors == []
    assert inserted == {"a": 300, "b": 120, "c": 80}
    rollups_refresh()
    assert_equal_to_a_full_recompute()


WAITING = "SELECT count(*) FROM pg_locks WHERE NOT granted"
# On Citus a batch waits on another's rows on the worker holding their shard.
WAITING_CITUS = (
    f"SELECT ({WAITING}) + (SELECT coalesce(sum(result::int), 0) FROM run_command_on_workers('{WAITING}'))"
)


def _waiting_for_locks(count: int, timeout: float = 10.0) -> bool:
    import time as clock

    deadline = clock.monotonic() + timeout
    while clock.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(WAITING_CITUS if citus_mode() else WAITING)
            if cursor.fetchone()[0] >= count:
                return True
        clock.sleep(0.05)
    return False


@pytest.mark.services
def test_the_worker_folds_a_batch_and_the_rollups_are_fresh_after(celery_worker_real, ingest_user):
    reference_data()
    observations_ingest_rows(rows=rows(mixed(120), run="w"), actor=ingest_user)
    assert rollups_wait_fresh(timeout=20)
    assert RollupDelta.objects.count() == 0
    assert ObservationRollup.objects.get().n == 120
    assert_equal_to_a_full_recompute()
