"""Reads of the program app: every page and list runs a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet
from django.utils import timezone

from core.audit import transitions_for_many
from core.models import Transition
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
from program.months import month_end, month_start, program_month

# How a row of each kind leads to its program (program_of).
_PROGRAM_OF = {
    "program": "slug",
    "phase": "phases__pk",
    "gate": "phases__gates__pk",
    "criterion": "phases__gates__criteria__pk",
    "migration": "migrations__pk",
}


def program_of(kind: str, value: object) -> Program | None:
    """The program that a URL's slug, or phase, gate, criterion or migration id, belongs to; one query.
    The write rules and page guards ask the policy about it before reading any input."""
    return Program.objects.filter(**{_PROGRAM_OF[kind]: value}).first()


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
    # A decided gate shows the evaluation its standing decision froze, whatever was evaluated since.
    # Otherwise the last one confirmed: a reused evaluation (the same inputs again, as after an edit is
    # undone) keeps its evaluated_at but is checked again.
    frozen = Decision.objects.filter(
        gate_id=OuterRef("gate_id"), evaluation_id=OuterRef("pk"), reopened_at__isnull=True
    )
    latest = (
        Evaluation.objects.filter(gate_id=gate_id)
        .annotate(frozen=Exists(frozen))
        .order_by("-frozen", "-checked_at", "-id")
        .first()
    )
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


def gate_history(gate: Gate) -> QuerySet[Transition]:
    return transitions_for_many(Gate, [gate.pk]).order_by("-at", "-id")


@dataclass(frozen=True)
class TimelineBar:
    phase: Phase
    planned: tuple[float, float]  # left and width, % of the program span
    actual: tuple[float, float] | None
    slip_days: int | None  # end vs planned end (expected end for an active phase); None if not started
    slip_text: str


@dataclass(frozen=True)
class GateMark:
    number: int
    gate: Gate
    left: float
    row: int  # the phase row it sits on


@dataclass(frozen=True)
class MonthTick:
    number: int
    left: float
    width: float
    calendar: str  # "Jan ’26", "Feb" …


@dataclass(frozen=True)
class Timeline:
    bars: list[TimelineBar]
    today: date
    today_left: float | None  # None when today is outside the program
    month: int
    months: int
    ticks: list[MonthTick]
    gate_marks: list[GateMark]


def _days(days: int) -> str:
    days = abs(days)
    return f"{days} day{'s' if days != 1 else ''}"


def _off_plan(days: int) -> str:
    """ "12 days late", "50 days early": a signed "−50 d" read as nonsense on a program started early."""
    return f"{_days(days)} {'late' if days > 0 else 'early'}"


def _slip(phase: Phase, today: date) -> tuple[int | None, str]:
    """How far the phase is off its plan, in words short enough for the timeline's label column."""
    if phase.actual_end:
        days = (phase.actual_end - phase.planned_end).days
        return days, "ended on plan" if days == 0 else f"ended {_off_plan(days)}"
    if phase.actual_start:
        shift = (phase.actual_start - phase.planned_start).days
        started = "started on plan" if shift == 0 else f"started {_off_plan(shift)}"
        overdue = (today - phase.planned_end).days
        if overdue > 0:
            return overdue, f"{started}, {_days(overdue)} overdue"
        return 0, started
    return None, f"starts {phase.planned_start:%-d %b %Y}"


def program_timeline(program: Program, today: date | None = None) -> Timeline:
    """Positions (as % of the program span) for the timeline: month axis, planned vs actual, today, gates."""
    today = today or timezone.localdate()
    start = program.start_date
    phases = list(program.phases.all())
    # A plan that slipped past month 14 gets month 15 and on, rather than bars cut at the edge.
    last = max(
        [
            month_end(start, program.months),
            *(p.actual_end or p.planned_end for p in phases),
            *(p.planned_end for p in phases),
            *(g.due_date for p in phases for g in p.gates.all()),
        ]
    )
    shown = program.months
    while month_end(start, shown) < last and shown < program.months + 24:
        shown += 1
    end = month_end(start, shown)
    span = max((end - start).days + 1, 1)

    def left(day: date) -> float:
        return max(0.0, min(100.0, (day - start).days / span * 100))

    def right(day: date) -> float:  # the end of a day
        return left(day + timedelta(days=1))

    ticks = []
    for number in range(1, shown + 1):
        first = month_start(start, number)
        label = f"{first:%b ’%y}" if number == 1 or first.month == 1 else f"{first:%b}"
        ticks.append(MonthTick(number, left(first), right(month_end(start, number)) - left(first), label))
    bars, marks = [], []
    for row, phase in enumerate(phases):
        actual = None
        if phase.actual_start:
            finish = phase.actual_end or today
            actual = (left(phase.actual_start), max(right(finish) - left(phase.actual_start), 0.4))
        slip_days, slip_text = _slip(phase, today)
        planned = (left(phase.planned_start), right(phase.planned_end) - left(phase.planned_start))
        bars.append(TimelineBar(phase, planned, actual, slip_days, slip_text))
        marks += [GateMark(0, gate, right(gate.due_date), row) for gate in phase.gates.all()]
    marks = [GateMark(n, m.gate, m.left, m.row) for n, m in enumerate(marks, start=1)]
    return Timeline(
        bars=bars,
        today=today,
        today_left=left(today) if start <= today <= end else None,
        month=program_month(start, today, program.months),
        months=program.months,
        ticks=ticks,
        gate_marks=marks,
    )
