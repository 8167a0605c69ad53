"""Calibration: each moment uses only the data before it, and judges as the gate evaluation would.

The program's baseline and candidate get three spells of observations; after each the gate is
evaluated for real (reading everything there is), and the calibration's point at the spell's end
must say exactly what that evaluation stored, however many rows came later."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from itertools import pairwise

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from metrics.models import Observation
from metrics.rollups.maintain import rollups_rebuild
from metrics.selectors import comparison_compute
from program import services
from program.calibration import (
    MAX_POINTS,
    Calibration,
    CalibrationPoint,
    calibration_criterion_get,
    calibration_points,
    criterion_calibration,
)
from program.calibration_reading import calibration_reading
from program.models import Criterion, Phase
from tests.program.factories import make_program, metrics_for_template, spread


def observe_between(ref, system, values, start, end, tag):
    """`values` evenly from start to before end (bulk, as tests/program/factories.observe does)."""
    step = (end - start) / len(values)
    Observation.objects.bulk_create(
        Observation(
            definition=ref["throughput"],
            system=ref[system],
            workload=ref["medium"],
            value=value,
            unit=ref["throughput"].unit,
            observed_at=start + i * step,
            run_id=f"{tag}-{system}-{i}",
        )
        for i, value in enumerate(values)
    )


@pytest.fixture
def ref(db, lead):
    ref = metrics_for_template()
    ref["program"] = make_program(lead, start=(timezone.now() - timedelta(days=120)).date())
    canary = Phase.objects.get(program=ref["program"], kind="canary")
    ref["gate"] = services.gate_add(
        actor=lead, phase=canary, name="Calibrated", kind="milestone", due_date=canary.planned_end
    )
    ref["criterion"] = services.criterion_add(
        actor=lead,
        gate=ref["gate"],
        name="Throughput at least legacy's",
        kind="relative",
        metric=ref["throughput"],
        workload=ref["medium"],
        threshold=1.0,
        min_samples=10,
    )
    return ref


def _criterion(ref) -> Criterion:
    return calibration_criterion_get(ref["criterion"].pk)


def _evaluated(ref):
    evaluation = services.gate_evaluate(gate=ref["gate"])
    return evaluation.results.get(criterion=ref["criterion"])


SPELLS = (1.1, 0.8, 1.3)  # the candidate's level against the baseline's 100, spell by spell


def test_each_point_says_what_the_gate_evaluation_said_then(ref):
    now = timezone.now()
    ends = [now - timedelta(days=20), now - timedelta(days=10), now]
    starts = [now - timedelta(days=30), *ends[:2]]
    results, early = [], None
    for index, (start, end, level) in enumerate(zip(starts, ends, SPELLS, strict=True)):
        observe_between(ref, "legacy", spread(100, 40), start, end, f"s{index}")
        observe_between(ref, "rebuilt", spread(100 * level, 40), start, end, f"s{index}")
        results.append(_evaluated(ref))
        if index == 0:
            early = criterion_calibration(_criterion(ref), points=[ends[0]]).points[0]
    calibration = criterion_calibration(_criterion(ref), points=ends, now=timezone.now())
    assert [r.outcome for r in results] == ["pass", "fail", "pass"]  # the spells move the outcome
    for point, result in zip(calibration.points, results, strict=True):
        assert point.outcome == result.outcome
        assert point.reason == result.reason
        assert point.value == pytest.approx(result.value, rel=1e-12)
        assert point.value_ci == pytest.approx(tuple(result.evidence["value_ci"]), rel=1e-12)
        assert (point.n_baseline, point.n_candidate) == (
            result.evidence["baseline"]["n"],
            result.evidence["candidate"]["n"],
        )
    # Rows observed after the first point, added since it was first computed, leave it as it was.
    assert calibration.points[0] == early
    assert calibration.points[0].n_candidate == 40
    reading = calibration_reading(calibration)
    assert reading.startswith(f"Would have passed since {ends[2]:%-d %b %Y} (1 of 3 points)")
    assert "the outcome changed 2 times" in reading


def test_a_window_counts_back_from_each_point(ref):
    now = timezone.now()
    Criterion.objects.filter(pk=ref["criterion"].pk).update(window_days=7)
    observe_between(ref, "legacy", spread(100, 60), now - timedelta(days=30), now, "w")
    observe_between(ref, "rebuilt", spread(120, 60), now - timedelta(days=30), now, "w")
    point = now - timedelta(days=10)
    [calibrated] = criterion_calibration(_criterion(ref), points=[point], now=now).points
    in_window = Observation.objects.filter(
        system=ref["rebuilt"], observed_at__gte=point - timedelta(days=7), observed_at__lt=point
    ).count()
    assert calibrated.n_candidate == in_window == 14
    assert calibrated.outcome == "pass"


def test_large_sides_read_the_day_rollups_of_whole_days_before_the_point(ref, settings):
    settings.ROLLUP_THRESHOLD = 20  # 6 rows a day: 30 a side at the first point, over it
    today = datetime.combine(timezone.now().astimezone(UTC).date(), time.min, tzinfo=UTC)
    observe_between(ref, "legacy", spread(100, 120), today - timedelta(days=20), today, "r")
    observe_between(ref, "rebuilt", spread(90, 120), today - timedelta(days=20), today, "r")
    rollups_rebuild()
    points = [today - timedelta(days=15), today - timedelta(days=5)]
    calibration = criterion_calibration(_criterion(ref), points=points)
    for moment, point in zip(points, calibration.points, strict=True):
        expected = comparison_compute(
            definition=ref["throughput"],
            baseline=ref["legacy"],
            candidate=ref["rebuilt"],
            workload=ref["medium"],
            until=moment,
        )
        assert point.approximate and expected.approximate
        assert point.n_candidate == expected.candidate.n
        assert point.value == pytest.approx(expected.relative_performance, rel=1e-12)
        assert point.value_ci == pytest.approx(expected.relative_performance_ci, rel=1e-12)
        assert point.outcome == "fail"
    assert calibration.points[0].n_candidate < calibration.points[1].n_candidate


@pytest.mark.parametrize("rollups", [False, True])
def test_the_reads_do_not_grow_with_the_points(ref, settings, rollups):
    settings.ROLLUP_THRESHOLD = 30 if rollups else 100_000
    now = timezone.now()
    observe_between(ref, "legacy", spread(100, 200), now - timedelta(days=100), now, "q")
    observe_between(ref, "rebuilt", spread(105, 200), now - timedelta(days=100), now, "q")
    rollups_rebuild()
    criterion = _criterion(ref)
    counts = []
    for size in (2, MAX_POINTS):
        points = [now - timedelta(days=3 * i) for i in range(size)]
        with CaptureQueriesContext(connection) as context:
            calibration = criterion_calibration(criterion, points=points, now=now)
        assert len(calibration.points) == size
        counts.append(len(context.captured_queries))
    # Moments, then buckets of the large windows, then the rows of the others: at most three.
    assert max(counts) <= 3 and (counts[0] == counts[1] or rollups)  # exact: 2 whatever the number
    with CaptureQueriesContext(connection) as context:
        calibration = criterion_calibration(criterion, now=now)  # the default points: one more read
    assert len(context.captured_queries) <= 4
    assert 2 <= len(calibration.points) <= MAX_POINTS


def test_default_points_are_weekly_midnights_then_now():
    now = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
    short = calibration_points(datetime(2026, 10, 1, tzinfo=UTC), now)
    assert short[-1] == now and short[-2] == datetime(2026, 11, 23, tzinfo=UTC)
    assert all(b - a == timedelta(days=7) for a, b in pairwise(short[:-1]))
    long = calibration_points(datetime(2024, 1, 1, tzinfo=UTC), now)
    assert len(long) <= MAX_POINTS and long == sorted(long)
    assert all(t.time() == time.min for t in long[:-1])


def test_manual_and_unbound_criteria_have_nothing_to_replay(ref, lead):
    manual = services.criterion_add(actor=lead, gate=ref["gate"], name="Runbook", kind="manual")
    calibration = criterion_calibration(manual)
    assert calibration.points == [] and "manual" in calibration.unavailable


def test_a_sliced_criterion_says_it_cannot_be_replayed_rather_than_replay_every_row(ref, lead):
    sliced = services.criterion_add(
        actor=lead,
        gate=ref["gate"],
        name="Throughput on cluster a",
        kind="relative",
        metric=ref["throughput"],
        workload=ref["medium"],
        threshold=1.0,
        tag_filters={"cluster": ["a"]},
    )
    calibration = criterion_calibration(sliced)
    assert calibration.points == [] and "tag-filtered" in calibration.unavailable


def _calibration_of(criterion, values, ci_half):
    """A calibration with the given passing estimates (pure: the reading reads no rows)."""
    start = datetime(2026, 3, 2, tzinfo=UTC)
    points = [
        CalibrationPoint(
            at=start + timedelta(days=7 * i),
            outcome="pass" if value >= criterion.threshold else "fail",
            reason="",
            n_baseline=100,
            n_candidate=100,
            value=value,
            value_ci=(value - ci_half, value + ci_half),
            relative_performance=value,
            relative_performance_ci=(value - ci_half, value + ci_half),
            approximate=False,
        )
        for i, value in enumerate(values)
    ]
    return Calibration(criterion, "relative performance", "gte", criterion.threshold, points)


def test_the_reading_tells_a_loose_threshold_from_one_at_the_noise(ref):
    criterion = _criterion(ref)  # ≥ 1.0
    loose = calibration_reading(_calibration_of(criterion, [1.4, 1.5, 1.45, 1.5], 0.05))
    assert loose.startswith("Would have passed since 2 Mar 2026 (4 of 4 points)")
    assert "never closer than 0.4 to the threshold 1" in loose and "the threshold is loose" in loose
    tight = calibration_reading(_calibration_of(criterion, [1.02, 1.05, 1.01, 1.03], 0.05))
    assert "held the threshold at 4 of 4 points" in tight and "near the noise, not loose" in tight
    flaky = calibration_reading(_calibration_of(criterion, [1.02, 0.98, 1.03, 0.97, 1.01], 0.05))
    assert "the outcome changed 4 times" in flaky and "inside the noise" in flaky
