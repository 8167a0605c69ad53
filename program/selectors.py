"""Reads of the program app: every page and list runs a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db.models import Count, Prefetch, Q, QuerySet
from django.utils import timezone

from core.audit import transitions_for_many
from program.models import (
    Criterion,
    CriterionResult,
    Decision,
    Evaluation,
    Gate,
    Phase,
    Program,
    WorkloadMigration,
)
from program.months import month_end


def programs_list() -> QuerySet[Program]:
    return (
        Program.objects.select_related("lead", "baseline_system", "candidate_system")
        .annotate(
            gate_count=Count("phases__gates", distinct=True),
            open_gates=Count(
                "phases__gates", filter=Q(phases__gates__status__in=Gate.UNDECIDED), distinct=True
            ),
        )
        .prefetch_related(
            Prefetch(
                "phases", queryset=Phase.objects.filter(status=Phase.Status.ACTIVE), to_attr="active_phases"
            )
        )
    )


def program_get(slug: str) -> Program:
    return (
        Program.objects.select_related("lead", "baseline_system", "candidate_system")
        .prefetch_related(
            Prefetch(
                "phases",
                queryset=Phase.objects.order_by("order").prefetch_related(
                    Prefetch("gates", queryset=Gate.objects.order_by("due_date", "id"))
                ),
            ),
            Prefetch("migrations", queryset=WorkloadMigration.objects.select_related("workload")),
        )
        .get(slug=slug)
    )


def gate_get(gate_id: int) -> Gate:
    """A gate with its criteria, their latest results and the decisions, in a fixed number of queries."""
    # The last one confirmed: a reused evaluation (the same inputs again, as after an edit is undone)
    # keeps its evaluated_at but is checked again.
    latest = Evaluation.objects.filter(gate_id=gate_id).order_by("-checked_at", "-id").first()
    results = CriterionResult.objects.filter(evaluation=latest) if latest else CriterionResult.objects.none()
    gate = (
        Gate.objects.select_related(
            "phase__program__baseline_system", "phase__program__candidate_system", "phase__program__lead"
        )
        .prefetch_related(
            Prefetch(
                "criteria",
                queryset=Criterion.objects.select_related(
                    "metric", "workload", "attested_by"
                ).prefetch_related(Prefetch("results", queryset=results, to_attr="latest_results")),
            ),
            Prefetch("decisions", queryset=Decision.objects.select_related("decided_by")),
        )
        .get(pk=gate_id)
    )
    gate.latest_evaluation = latest
    return gate


def gate_history(gate: Gate):
    return transitions_for_many(Gate, [gate.pk]).order_by("-at", "-id")


@dataclass(frozen=True)
class TimelineBar:
    phase: Phase
    planned_left: float
    planned_width: float
    actual_left: float | None
    actual_width: float | None
    slip_days: int


@dataclass(frozen=True)
class Timeline:
    bars: list[TimelineBar]
    today_left: float
    month: int
    months: int
    gate_marks: list[tuple[Gate, float]]


def program_timeline(program: Program, today: date | None = None) -> Timeline:
    """Positions (as % of the program span) for the timeline: planned vs actual, today, gates."""
    today = today or timezone.localdate()
    start, end = program.start_date, month_end(program.start_date, program.months)
    span = max((end - start).days, 1)

    def left(day: date) -> float:
        return max(0.0, min(100.0, (day - start).days / span * 100))

    bars, marks = [], []
    for phase in program.phases.all():
        actual_left = actual_width = None
        if phase.actual_start:
            finish = phase.actual_end or today
            actual_left, actual_width = (
                left(phase.actual_start),
                max(left(finish) - left(phase.actual_start), 0.6),
            )
        compare_end = phase.actual_end or (
            today if phase.status == Phase.Status.ACTIVE and today > phase.planned_end else phase.planned_end
        )
        bars.append(
            TimelineBar(
                phase,
                left(phase.planned_start),
                left(phase.planned_end) - left(phase.planned_start),
                actual_left,
                actual_width,
                (compare_end - phase.planned_end).days,
            )
        )
        marks += [(gate, left(gate.due_date)) for gate in phase.gates.all()]
    elapsed_months = (
        (today.year - start.year) * 12 + today.month - start.month + (1 if today.day >= start.day else 0)
    )
    return Timeline(bars, left(today), max(1, min(elapsed_months, program.months)), program.months, marks)
