"""Calibration: how one criterion would have decided at earlier moments, with only the data of then.

A lead sets a threshold once and sees it judged at one moment, the gate's evaluation. Replaying it
at earlier moments shows whether it is too loose (it passed from the first weeks, by a wide margin)
or too tight (it never passed, or flips with the noise) before the gate is due.

"The data of then" is every observation with observed_at before the moment (the criterion's
window_days counted back from it): arrival time is not used. The only arrival time is the ingest
batch's created_at, and history is routinely backfilled (imports, the Prometheus pull's range
queries, the demo) so it would show a moment with no data where the numbers existed; the day
rollups have no batch either, so large sides could not honour it; and the time index does not
carry batch_id, so the join would read every row from the heap.

Each moment is judged by program.evaluation.criterion_judge, the gate evaluation's own judge, on the
samples of that window: the outcome is what an evaluation at that moment would have stored had the
later rows not existed yet. All moments are read together (metrics.selectors.sides_over_time): at
most three queries whatever their number, and one more for the series' first day (from
its rollups) when the moments are the default ones."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta

from django.utils import timezone

from metrics.public import series_first_day, sides_over_time
from program.evaluation import criterion_judge, criterion_window_start
from program.models import Criterion, CriterionResult

Outcome = CriterionResult.Outcome
MAX_POINTS = 26
STEP_DAYS = 7


@dataclass(frozen=True)
class CalibrationPoint:
    at: datetime
    outcome: str
    reason: str
    n_baseline: int
    n_candidate: int
    value: float | None  # what the threshold is compared with (ratio, improvement % or the value)
    value_ci: tuple[float, float] | None
    relative_performance: float | None
    relative_performance_ci: tuple[float, float] | None
    approximate: bool


@dataclass
class Calibration:
    criterion: Criterion
    label: str  # what `value` is: "relative performance", "improvement %", "candidate p50"…
    operator: str
    threshold: float | None
    points: list[CalibrationPoint] = field(default_factory=list)
    # Why there are no points (a manual criterion, an unbound slot); blank when there are.
    unavailable: str = ""
    reading: str = ""  # in words: program.calibration_reading


def _midnight(moment: datetime) -> datetime:
    return datetime.combine(moment.astimezone(UTC).date(), time.min, tzinfo=UTC)


def calibration_points(start: datetime, now: datetime, *, limit: int = MAX_POINTS) -> list[datetime]:
    """Moments from `start` to now, oldest first: whole UTC midnights every week (every few weeks
    when that would be more than `limit`), so day rollups cover each window exactly, and `now`."""
    last = _midnight(now)
    weeks = max(0, (last - start).days // STEP_DAYS)
    step = timedelta(days=STEP_DAYS * max(1, math.ceil(weeks / (limit - 1))))
    grid: list[datetime] = []
    moment = last
    while moment > start and len(grid) < limit - 1:
        grid.append(moment)
        moment -= step
    grid.reverse()
    # A midnight within a day of now would repeat it.
    return [t for t in grid if t < now - timedelta(days=1)] + [now]


def _label(criterion: Criterion) -> str:
    if criterion.kind == Criterion.Kind.ABSOLUTE:
        return f"candidate {criterion.statistic or (criterion.metric.statistic if criterion.metric else '')}"
    return "improvement %" if criterion.kind == Criterion.Kind.IMPROVEMENT else "relative performance"


def _pair(values: Sequence[float] | None) -> tuple[float, float] | None:
    return (values[0], values[1]) if values else None


def criterion_calibration(
    criterion: Criterion, *, points: list[datetime] | None = None, now: datetime | None = None
) -> Calibration:
    """The criterion judged at each point (default: calibration_points from the program's start).
    A point at or after `now` reads to the end, exactly as the gate's evaluation now reads."""
    program = criterion.gate.phase.program
    now = now or timezone.now()
    calibration = Calibration(criterion, "", criterion.operator, criterion.threshold)
    if criterion.kind == Criterion.Kind.MANUAL:
        calibration.unavailable = "A manual attestation has no numbers to replay."
        return calibration
    if criterion.kind == Criterion.Kind.EVERY_METRIC:
        calibration.unavailable = (
            "Calibration replays one metric; an every-metric criterion compares them all."
        )
        return calibration
    metric_id = criterion.metric_id
    if criterion.unbound_slots or metric_id is None:
        calibration.unavailable = "Bind its template slots first: there is no metric to replay yet."
        return calibration
    if criterion.tag_filters or criterion.group_by:
        # The replay reads whole series; a sliced criterion's rows are a subset it cannot replay yet.
        calibration.unavailable = "Calibration does not replay tag-filtered or grouped criteria yet."
        return calibration
    calibration.label = _label(criterion)
    baseline, candidate = program.baseline_system, program.candidate_system
    if points is None:
        # From the program's start, or the series' first observation if later: weeks without data
        # would only say "too few samples" and squeeze the weeks that have some.
        start = datetime.combine(program.start_date, time.min, tzinfo=UTC)
        first = series_first_day(
            definition_id=metric_id,
            workload_id=criterion.workload_id,
            baseline=baseline,
            candidate=candidate,
        )
        if first is not None:
            start = max(start, datetime.combine(first, time.min, tzinfo=UTC))
        points = calibration_points(start, now)
    points = sorted(points)[-MAX_POINTS:]
    windows = [(criterion_window_start(criterion, t), None if t >= now else t) for t in points]
    sides = sides_over_time(
        definition_id=metric_id,
        workload_id=criterion.workload_id,
        windows=windows,
        baseline=baseline,
        candidate=candidate,
    )
    for t, pair in zip(points, sides, strict=True):
        judgement = criterion_judge(criterion, baseline=baseline, candidate=candidate, sides=pair, now=t)
        evidence = judgement.evidence
        base, cand = pair
        calibration.points.append(
            CalibrationPoint(
                at=t,
                outcome=judgement.outcome,
                reason=judgement.reason,
                n_baseline=base.stats.n,
                n_candidate=cand.stats.n,
                value=judgement.value,
                value_ci=_pair(evidence.get("value_ci")),
                relative_performance=evidence.get("relative_performance"),
                relative_performance_ci=_pair(evidence.get("relative_performance_ci")),
                approximate=bool(evidence.get("approximate")),
            )
        )
    return calibration


def calibration_criterion_get(pk: int) -> Criterion:
    """A criterion with what its calibration reads, in one query."""
    return Criterion.objects.select_related(
        "metric",
        "workload",
        "gate__phase__program__baseline_system",
        "gate__phase__program__candidate_system",
    ).get(pk=pk)
