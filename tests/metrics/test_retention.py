"""Retention: a month older than OBSERVATIONS_KEEP_MONTHS loses its partition only once its rollups are
complete; its rollups stay (no recompute from the missing rows touches them), and a comparison over it
reads them and says that the rows are gone."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from metrics.ingest import observations_ingest_rows
from metrics.models import Observation, ObservationMonthDropped, ObservationRollup, RollupDelta, RollupStale
from metrics.partitions import (
    month_add,
    month_start,
    observations_partitions_create,
    partition_name,
    partitions_existing,
)
from metrics.public import comparison_compute, window_series
from metrics.retention import observations_partitions_drop, retention_horizon
from metrics.rollups.maintain import rollups_medians_recompute, rollups_rebuild
from metrics.tasks import observations_partitions_drop as drop_task
from metrics.tasks import rollups_refresh
from tests.metrics.factories import reference_data

THIS_MONTH = month_start(timezone.now())
OLD = month_add(THIS_MONTH, -2)  # the one month wholly before the horizon of two months kept
NEWER = month_add(THIS_MONTH, -1)  # inside it
rng = np.random.default_rng(2828)


def observations(month, *, system: str, centre: float, n: int = 150) -> list[dict]:
    start = month + timedelta(days=9)
    return [
        {
            "metric": "latency",
            "system": system,
            "workload": "finetune",
            "value": float(v),
            "unit": "s",
            "observed_at": (start + timedelta(minutes=7 * i)).isoformat(),
            "run_id": f"{system}-{month:%Y%m}-{i}",
        }
        for i, v in enumerate(rng.normal(centre, centre / 20, n))
    ]


@pytest.fixture
def two_months(db, settings):
    """Rows of an old month and of last month in their partitions; the batches' deltas not yet folded
    (the test's transaction never commits, so nothing ran after it)."""
    ref = reference_data()
    observations_partitions_create(since=OLD)
    for month in (OLD, NEWER):
        for system, centre in (("legacy", 1.0), ("rebuilt", 0.8)):
            observations_ingest_rows(rows=observations(month, system=system, centre=centre), actor=None)
    settings.OBSERVATIONS_KEEP_MONTHS = 2
    return ref


def test_keeping_every_month_is_the_default_and_drops_nothing(two_months, settings):
    settings.OBSERVATIONS_KEEP_MONTHS = None
    assert retention_horizon() is None
    assert observations_partitions_drop() == []
    assert partition_name(OLD) in partitions_existing()


def rollups_complete() -> None:
    """What the worker and the nightly beat do: fold the deltas, then compute the exact medians."""
    rollups_refresh()
    rollups_medians_recompute(before=timezone.now().date())


def test_a_month_whose_rollups_are_not_complete_is_kept(two_months):
    # The batches' deltas are not folded yet.
    assert RollupDelta.objects.filter(day__lt=NEWER.date()).exists()
    assert observations_partitions_drop() == []
    rollups_refresh()
    # Folded, the days' medians wait for the nightly recompute, which needs the rows.
    assert ObservationRollup.objects.filter(day__lt=NEWER.date(), median__isnull=True).exists()
    assert observations_partitions_drop() == []
    assert partition_name(OLD) in partitions_existing()
    rollups_medians_recompute(before=timezone.now().date())
    # A day marked stale (a correction) must be recomputed from the rows first.
    stale = RollupStale.objects.create(
        definition_id=two_months["latency"].pk,
        workload_id=two_months["medium"].pk,
        day=(OLD + timedelta(days=9)).date(),
    )
    assert drop_task.delay().get() == []
    assert partition_name(OLD) in partitions_existing()
    stale.delete()
    assert drop_task.delay().get() == [partition_name(OLD)]


def test_a_dropped_month_keeps_its_rollups_and_is_compared_from_them(two_months):
    latency = two_months["latency"]
    window = {"since": OLD, "until": month_add(OLD, 1)}
    rollups_complete()
    kept_rows = Observation.objects.filter(observed_at__lt=month_add(OLD, 1)).count()
    rollups_before = list(ObservationRollup.objects.filter(day__lt=month_add(OLD, 1).date()).values())

    assert observations_partitions_drop() == [partition_name(OLD)]

    assert partition_name(OLD) not in partitions_existing()
    assert partition_name(NEWER) in partitions_existing()
    assert Observation.objects.filter(observed_at__lt=month_add(OLD, 1)).count() == 0
    assert ObservationMonthDropped.objects.get().rows == kept_rows == 300
    # A full rebuild from the rows leaves the dropped month's rollups alone: they are all that is left.
    rollups_rebuild()
    after = list(
        ObservationRollup.objects.filter(day__lt=month_add(OLD, 1).date()).values("day", "system_id", "n")
    )
    assert sorted((r["day"], r["system_id"], r["n"]) for r in after) == sorted(
        (r["day"], r["system_id"], r["n"]) for r in rollups_before
    )

    comparison = comparison_compute(
        definition=latency, baseline=two_months["legacy"], candidate=two_months["rebuilt"], **window
    )
    assert (comparison.baseline.n, comparison.candidate.n) == (150, 150)
    assert comparison.verdict == "better"
    assert "(rollups)" in comparison.method
    assert f"rows before {retention_horizon():%Y-%m-%d} are dropped by retention" in comparison.method


def test_a_window_inside_the_kept_months_reads_its_rows_as_before(two_months):
    rollups_complete()
    comparison = comparison_compute(
        definition=two_months["latency"],
        baseline=two_months["legacy"],
        candidate=two_months["rebuilt"],
        since=NEWER,
        until=month_add(NEWER, 1),
    )
    assert comparison.verdict == "better"
    assert "rollups" not in comparison.method and "retention" not in comparison.method


def test_a_window_before_the_horizon_without_rollups_yet_charts_its_rows_as_it_compares_them(two_months):
    """Before its deltas are folded, an old month has rows and no rollups: the comparison reads the rows,
    and so does the chart of the window (Grafana's query API), by the same rule."""
    assert not ObservationRollup.objects.exists()
    window = {"since": OLD, "until": month_add(OLD, 1)}
    sides = {"baseline": two_months["legacy"], "candidate": two_months["rebuilt"]}
    comparison = comparison_compute(definition=two_months["latency"], **sides, **window)
    assert (comparison.baseline.n, comparison.candidate.n) == (150, 150)
    assert "(rollups)" not in comparison.method  # the rows settled it, and the method says so
    assert "the rollups alone" not in comparison.method
    assert f"reaches before {retention_horizon():%Y-%m-%d}" in comparison.method
    assert comparison.method.endswith("with no rollups yet: the rows kept)")

    series = window_series(
        definition=two_months["latency"],
        workload=None,
        statistics=["p50"],
        bucket="day",
        **sides,
        **window,
    )["p50"]
    # 150 rows 7 minutes apart from the 10th: 18 hours, one UTC day.
    day = OLD + timedelta(days=9)
    rows = Observation.objects.filter(system=two_months["legacy"], observed_at__lt=month_add(OLD, 1))
    expected = float(np.median([r.value for r in rows]))
    assert [at for at, _ in series.baseline] == [day]
    assert series.baseline[0][1] == pytest.approx(expected)
    assert len(series.candidate) == 1


def test_the_drop_is_scheduled_daily(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["observations-partitions-drop"]
    assert entry["task"] == "metrics.tasks.observations_partitions_drop"


def test_the_comparison_pages_chart_of_a_dropped_month_reads_its_rollups(two_months, client, viewer):
    """Its 150 rows a side are under the rollup threshold, but they are gone: the answer and its chart
    both come from the rollups (the chart once went by the row count alone, and read nothing)."""
    rollups_complete()
    observations_partitions_drop()
    client.force_login(viewer)
    window = f"since={OLD:%Y-%m-%d}T00:00:00Z&until={month_add(OLD, 1):%Y-%m-%d}T00:00:00Z"
    page = client.get(f"/metrics/compare/?metric=latency&baseline=legacy&candidate=rebuilt&{window}")
    body = page.content.decode()
    assert page.status_code == 200
    assert "dropped by retention" in body
    assert "(read from the day rollups)" in body
    assert "every value is within ±0.1 % of the exact one" in body  # ACCURACY, once shown as "±0 %"
