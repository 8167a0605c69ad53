"""Shifting the rest of the plan when a phase starts early or late, and the rule that re-planned
phases stay in step with their neighbours.

Advancing starts the next phase today. When that is not its planned start, the lead is offered to
move that phase and every later one, their gates' due dates (and, through phase_dates_changed, the
freeze windows that follow them) by the same slip. `plan_shift_preview` says what would move (the
advance page and `GET …/advance/` show it); `plan_shift_apply` does it inside the advance's
transaction, with one `plan_shifted` row in the program's history."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any

from django.contrib.auth.models import User

from core.audit import transition_record
from core.errors import ApplicationError
from program import signals
from program.models import Gate, Phase, Program

MSG_SHIFT_NEEDS_REASON = "Shifting the plan by {days} needs a reason: say why (reason)."
MSG_OVERLAP = (
    "{first} would end on {end:%-d %b %Y}, after {second} starts on {start:%-d %b %Y}: the phases "
    "would overlap by {days}. Re-plan {second} too, or confirm (confirm_overlap_or_gap) to keep it so."
)
MSG_GAP = (
    "{first} would end on {end:%-d %b %Y} and {second} starts on {start:%-d %b %Y}: {days} with no "
    "phase. Re-plan {second} too, or confirm (confirm_overlap_or_gap) to keep it so."
)


def days_text(days: int) -> str:
    days = abs(days)
    return f"{days} day{'s' if days != 1 else ''}"


@dataclass(frozen=True)
class PlanMove:
    """One date the shift moves: a phase's planned start or end, a gate's due date, the program's start."""

    subject: str  # "program" | "phase" | "gate"
    id: int
    name: str
    field: str
    before: date
    after: date

    def as_data(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "id": self.id,
            "name": self.name,
            "field": self.field,
            "from": self.before.isoformat(),
            "to": self.after.isoformat(),
        }


@dataclass(frozen=True)
class PlanShift:
    """Advancing now starts `starts` `days` off its planned start (negative: early); these dates move."""

    starts: Phase
    days: int
    moves: list[PlanMove] = field(default_factory=list)
    # Freeze windows (or anything else following the phases) that move with them, as receivers of
    # program.signals.plan_shift_previewed describe them.
    followers: list[PlanMove] = field(default_factory=list)

    @property
    def way(self) -> str:
        return "earlier" if self.days < 0 else "later"

    @property
    def off_plan(self) -> str:
        """ "50 days early" (a signed "-50 days off" read as nonsense)."""
        return f"{days_text(self.days)} {'early' if self.days < 0 else 'late'}"


def _moves(
    program: Program, phases: list[Phase], gates: dict[int, list[Gate]], days: int, *, first: bool
) -> list[PlanMove]:
    """The dates moving `days`: the program's start when the first phase starts (month 1 moves with
    it), and each phase's planned dates and its gates' due dates."""
    delta = timedelta(days=days)
    moves = []
    if first:
        moves.append(
            PlanMove(
                "program",
                program.pk,
                program.name,
                "start_date",
                program.start_date,
                program.start_date + delta,
            )
        )
    for phase in phases:
        moves += [
            PlanMove(
                "phase",
                phase.pk,
                phase.name,
                "planned_start",
                phase.planned_start,
                phase.planned_start + delta,
            ),
            PlanMove(
                "phase", phase.pk, phase.name, "planned_end", phase.planned_end, phase.planned_end + delta
            ),
        ]
        moves += [
            PlanMove("gate", gate.pk, gate.name, "due_date", gate.due_date, gate.due_date + delta)
            for gate in gates.get(phase.pk, [])
        ]
    return moves


def plan_shift_preview(program: Program, today: date) -> PlanShift | None:
    """What advancing today would offer to shift, or None when the next phase would start on plan
    (or nothing starts). Reads the program's prefetched phases and gates (selectors.program_get)."""
    phases = list(program.phases.all())
    if program.status == Program.Status.NOT_STARTED:
        starting = phases[0] if phases else None
    else:
        current = next((p for p in phases if p.status == Phase.Status.ACTIVE), None)
        starting = next((p for p in phases if current and p.order > current.order), None)
    if starting is None or starting.status != Phase.Status.PLANNED:
        return None
    days = (today - starting.planned_start).days
    if days == 0:
        return None
    later = [p for p in phases if p.order >= starting.order]
    gates = {p.pk: list(p.gates.all()) for p in later}
    first = program.status == Program.Status.NOT_STARTED
    shift = PlanShift(starts=starting, days=days, moves=_moves(program, later, gates, days, first=first))
    followers: list[PlanMove] = []
    for _receiver, described in signals.plan_shift_previewed.send(
        sender=Program, phases=[_shifted(p, days) for p in later]
    ):
        if isinstance(described, list):  # a receiver answers a list of PlanMove
            followers += described
    return replace(shift, followers=followers)


def _shifted(phase: Phase, days: int) -> Phase:
    """An unsaved copy of the phase with its planned dates moved (for the receivers' previews)."""
    return Phase(
        pk=phase.pk,
        program_id=phase.program_id,
        kind=phase.kind,
        name=phase.name,
        order=phase.order,
        planned_start=phase.planned_start + timedelta(days=days),
        planned_end=phase.planned_end + timedelta(days=days),
        actual_start=phase.actual_start,
        actual_end=phase.actual_end,
        status=phase.status,
    )


def plan_shift_apply(
    *, actor: User, program: Program, phases: list[Phase], starting: Phase, today: date, reason: str
) -> PlanShift | None:
    """Inside the advance's transaction, with `phases` locked: move `starting` and every later phase,
    their gates and (for the first phase) the program's start date by the slip; one history row."""
    days = (today - starting.planned_start).days
    if days == 0:
        return None
    if not reason.strip():
        raise ApplicationError(
            MSG_SHIFT_NEEDS_REASON.format(days=days_text(days)), status=400, field="reason"
        )
    later = [p for p in phases if p.order >= starting.order]
    gates = list(Gate.objects.select_for_update().filter(phase__in=later).order_by("due_date", "id"))
    by_phase: dict[int, list[Gate]] = {}
    for gate in gates:
        by_phase.setdefault(gate.phase_id, []).append(gate)
    first = program.status == Program.Status.NOT_STARTED
    moves = _moves(program, later, by_phase, days, first=first)
    delta = timedelta(days=days)
    for phase in later:
        phase.planned_start += delta
        phase.planned_end += delta
        phase.save(update_fields=["planned_start", "planned_end"])
    for gate in gates:
        gate.due_date += delta
    Gate.objects.bulk_update(gates, ["due_date"])
    if first:
        program.start_date += delta
        program.save(update_fields=["start_date"])
    transition_record(
        subject=program,
        action="plan_shifted",
        actor=actor,
        reason=reason,
        data={"days": days, "starts": starting.name, "moves": [move.as_data() for move in moves]},
    )
    for phase in later:
        signals.phase_dates_changed.send(sender=Phase, phase_id=phase.pk, cause="plan shifted")
    return PlanShift(starts=starting, days=days, moves=moves)


def replan_conflicts(
    *, phase: Phase, planned_start: date, planned_end: date, neighbours: list[Phase]
) -> None:
    """Refuse (409 naming both phases) a re-plan that makes the phase overlap a neighbour or leave a
    gap next to it. Only a boundary the re-plan moves is checked, and a completed neighbour is history
    (its real dates are its actual ones), so it is not compared."""
    before = [p for p in neighbours if p.order < phase.order]
    after = [p for p in neighbours if p.order > phase.order]
    previous = before[-1] if before else None
    following = after[0] if after else None
    pairs = []
    if previous is not None and planned_start != phase.planned_start:
        pairs.append((previous, previous.planned_end, phase, planned_start))
    if following is not None and planned_end != phase.planned_end:
        pairs.append((phase, planned_end, following, following.planned_start))
    for first, end, second, start in pairs:
        if Phase.Status.COMPLETED in (first.status, second.status):
            continue
        days = (start - end).days - 1  # contiguous phases: the next starts the day after
        if days == 0:
            continue
        template = MSG_OVERLAP if days < 0 else MSG_GAP
        raise ApplicationError(
            template.format(first=first.name, second=second.name, end=end, start=start, days=days_text(days)),
            extra={
                "phases": [first.name, second.name],
                "problem": "overlap" if days < 0 else "gap",
                "days": abs(days),
            },
        )


@dataclass(frozen=True)
class AdvancePreview:
    """What advancing a program today would do: the confirmation step of the page and GET …/advance/."""

    program: Program
    completes: Phase | None  # the active phase; None when the program has not started
    starts: Phase | None  # None when completing the last phase completes the program
    exit_gate: Gate | None
    gate_done: bool
    planned: date | None  # the planned end of `completes`, or the program's start date
    days_off: int  # today vs `planned`: negative early, positive late
    needs_reason: bool
    shift: PlanShift | None  # what shift_plan would move; None when `starts` starts on plan
    # The other gates of `completes` nobody decided yet: advancing closes them (Gate.CLOSED_REASON).
    closes: list[Gate] = field(default_factory=list)


def advance_preview(program: Program, today: date, tolerance_days: int) -> AdvancePreview | None:
    """None when there is nothing to advance (completed). Reads the prefetched phases and gates."""
    phases = list(program.phases.all())
    if program.status == Program.Status.NOT_STARTED:
        days_off = (today - program.start_date).days
        return AdvancePreview(
            program=program,
            completes=None,
            starts=phases[0] if phases else None,
            exit_gate=None,
            gate_done=True,
            planned=program.start_date,
            days_off=days_off,
            needs_reason=abs(days_off) > tolerance_days,
            shift=plan_shift_preview(program, today),
        )
    current = next((p for p in phases if p.status == Phase.Status.ACTIVE), None)
    if current is None:
        return None
    exit_gate = next((g for g in current.gates.all() if g.kind == Gate.Kind.EXIT), None)
    days_off = (today - current.planned_end).days
    return AdvancePreview(
        program=program,
        completes=current,
        starts=next((p for p in phases if p.order > current.order), None),
        exit_gate=exit_gate,
        gate_done=exit_gate is None or exit_gate.status in (Gate.Status.PASSED, Gate.Status.WAIVED),
        planned=current.planned_end,
        days_off=days_off,
        needs_reason=abs(days_off) > tolerance_days,
        shift=plan_shift_preview(program, today),
        closes=[g for g in current.gates.all() if g.status in Gate.UNDECIDED and g.kind != Gate.Kind.EXIT],
    )
