"""Creating programs from templates, re-planning phases, advancing the active phase."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.services.inbox import notices_clear
from core.transitions import require_state
from metrics.models import MetricDefinition, System, Workload
from program import policies, signals
from program.blueprints import blueprint_load, blueprint_slots
from program.models import Criterion, Gate, Phase, Program
from program.months import month_end, month_start
from program.services.bindings import Bound, bindings_resolve, bound_label
from program.services.gate_triggers import gates_reevaluate_for_program
from program.services.memberships import membership_of_creator
from program.services.plan_shift import plan_shift_apply, replan_conflicts

MSG_EXIT_NOT_DONE = "The {phase} exit gate '{gate}' is {status}: pass or waive it before advancing."
MSG_REASON_OFF_PLAN = "{phase} was planned to {what} on {planned_end}; advancing today is {days} days {way} plan. Say why (reason)."
# Advancing this many days before or after the planned end is "on plan"; beyond it needs a reason.
ADVANCE_TOLERANCE_DAYS = 7

# A plan's months must fit in a date; far-off years are typos (year 9999 overflowed the phase dates).
EARLIEST_START, LATEST_START = date(2000, 1, 1), date(2100, 12, 31)


def _criterion_from_blueprint(gate: Gate, spec: dict[str, Any], resolved: dict[str, Bound]) -> Criterion:
    """A template criterion on the program's bound metric and workload; an unbound slot leaves the
    field empty (the criterion keeps the slot's name and is inconclusive until a lead binds it)."""
    metric_slot, workload_slot = spec.get("metric_slot", ""), spec.get("workload_slot", "")
    metric = resolved.get(metric_slot) if metric_slot else None
    workload = resolved.get(workload_slot) if workload_slot else None
    return Criterion(
        gate=gate,
        name=spec["name"],
        kind=spec["kind"],
        slot=metric_slot,
        workload_slot=workload_slot,
        metric=metric if isinstance(metric, MetricDefinition) else None,
        workload=workload if isinstance(workload, Workload) else None,
        statistic=spec.get("statistic", ""),
        operator=spec.get("operator", "gte"),
        threshold=spec.get("threshold"),
        window_days=spec.get("window_days"),
        # An every-metric criterion is always judged on each metric's interval.
        require_significant=spec.get("require_significant", spec["kind"] == Criterion.Kind.EVERY_METRIC),
        required=spec.get("required", True),
        min_samples=spec.get("min_samples", 30),
    )


@transaction.atomic
def program_create(
    *,
    actor: User,
    slug: str,
    name: str,
    start_date: date,
    baseline: System,
    candidate: System,
    template: str = "rebuild-14m",
    description: str = "",
    bindings: dict[str, Any] | None = None,
    is_private: bool = False,
) -> Program:
    """Program creators (group program-leads) and platform admins; the creator becomes the program's
    lead (a membership). A program with the template's
    phases, exit gates, milestones and suggested criteria.

    The first phase is active from the start date; a program whose start date is still ahead is
    `not_started`, with no active phase, until that day (programs_start_due) or until a lead advances
    it. Planned dates follow the template's months. `bindings`
    maps the template's slots to keys ({"throughput": "training-throughput@2"}); a slot left out takes
    its suggested key when the registry has it and otherwise stays unbound, so a registry without the
    template's metrics or workloads never stops a program from being created."""
    policies.require_create_programs(actor)
    try:
        blueprint = blueprint_load(template)
    except KeyError:
        raise ApplicationError(f"There is no template '{template}'.", status=400, field="template") from None
    if baseline.pk == candidate.pk:
        raise ApplicationError(
            "Baseline and candidate must be different systems.", status=400, field="candidate"
        )
    if not EARLIEST_START <= start_date <= LATEST_START:
        raise ApplicationError(
            f"start_date must be between {EARLIEST_START} and {LATEST_START}.", status=400, field="start_date"
        )
    resolved = bindings_resolve(blueprint_slots(blueprint), bindings, suggest=True)
    started = start_date <= timezone.localdate()
    try:
        with transaction.atomic():
            program = Program.objects.create(
                slug=slug,
                name=name,
                description=description,
                template=template,
                months=blueprint["months"],
                approval_bar_weeks=blueprint.get("approval_bar_weeks"),
                start_date=start_date,
                lead=actor,
                status=Program.Status.ACTIVE if started else Program.Status.NOT_STARTED,
                baseline_system=baseline,
                candidate_system=candidate,
                is_private=is_private,
            )
    except IntegrityError:
        raise ApplicationError(f"A program '{slug}' exists already.", field="slug") from None
    criteria = []
    for order, spec in enumerate(blueprint["phases"], start=1):
        first, last = spec["months"]
        phase = Phase.objects.create(
            program=program,
            kind=spec["kind"],
            name=spec["name"],
            order=order,
            planned_start=month_start(start_date, first),
            planned_end=month_end(start_date, last),
            status=Phase.Status.ACTIVE if order == 1 and started else Phase.Status.PLANNED,
            actual_start=start_date if order == 1 and started else None,
        )
        exit_spec = spec["exit_gate"]
        gate = Gate.objects.create(
            phase=phase, name=exit_spec["name"], kind=Gate.Kind.EXIT, due_date=phase.planned_end
        )
        criteria += [_criterion_from_blueprint(gate, c, resolved) for c in exit_spec.get("criteria") or []]
        for milestone in spec.get("milestones") or []:
            gate = Gate.objects.create(
                phase=phase,
                name=milestone["name"],
                kind=Gate.Kind.MILESTONE,
                due_date=month_end(start_date, milestone["month"]),
            )
            criteria += [
                _criterion_from_blueprint(gate, c, resolved) for c in milestone.get("criteria") or []
            ]
    Criterion.objects.bulk_create(criteria)
    membership_of_creator(program=program, actor=actor)
    transition_record(
        subject=program,
        action="created",
        actor=actor,
        to_state=program.status,
        data={
            "template": template,
            "bindings": {slot: bound_label(value) for slot, value in resolved.items()},
        },
    )
    signals.program_created.send(sender=Program, program_id=program.pk)
    return program


@transaction.atomic
def phase_replan(
    *,
    actor: User,
    phase: Phase,
    planned_start: date,
    planned_end: date,
    reason: str,
    confirm_overlap_or_gap: bool = False,
) -> Phase:
    """Leads of the program only. Move a phase's planned dates; the old dates stay in the history
    (pghistory + transition). Dates that make it overlap the phase before or after it, or leave a gap
    next to one, are refused (409 naming both) unless `confirm_overlap_or_gap`."""
    policies.require_lead(actor, phase.program, "re-plan phases")
    if planned_end < planned_start:
        raise ApplicationError(
            "planned_end must not be before planned_start.", status=400, field="planned_end"
        )
    for field, value in (("planned_start", planned_start), ("planned_end", planned_end)):
        if not EARLIEST_START <= value <= LATEST_START:  # year 9999 would overflow the freeze window
            raise ApplicationError(
                f"{field} must be between {EARLIEST_START} and {LATEST_START}.", status=400, field=field
            )
    if not reason.strip():
        raise ApplicationError("Say why the plan changes.", status=400, field="reason")
    neighbours = list(Phase.objects.select_for_update().filter(program_id=phase.program_id).order_by("order"))
    phase = next(p for p in neighbours if p.pk == phase.pk)
    require_state(
        subject=f"Phase '{phase.name}'",
        state=phase.status,
        action="re-planning",
        allowed=Phase.TRANSITIONS["replan"],
    )
    if not confirm_overlap_or_gap:
        replan_conflicts(
            phase=phase, planned_start=planned_start, planned_end=planned_end, neighbours=neighbours
        )
    before = {"planned_start": phase.planned_start.isoformat(), "planned_end": phase.planned_end.isoformat()}
    phase.planned_start, phase.planned_end = planned_start, planned_end
    phase.save(update_fields=["planned_start", "planned_end"])
    Gate.objects.filter(phase=phase, kind=Gate.Kind.EXIT).update(due_date=planned_end)
    transition_record(
        subject=phase,
        action="replanned",
        actor=actor,
        reason=reason,
        data={
            "before": before,
            "after": {"planned_start": planned_start.isoformat(), "planned_end": planned_end.isoformat()},
            "confirmed_overlap_or_gap": confirm_overlap_or_gap,
        },
    )
    signals.phase_dates_changed.send(sender=Phase, phase_id=phase.pk, cause="re-planned")
    return phase


def advance_days_off_plan(phase: Phase, today: date) -> int:
    """Days between today and the phase's planned end: negative is early, positive late."""
    return (today - phase.planned_end).days


def advance_needs_reason(phase: Phase, today: date) -> bool:
    return abs(advance_days_off_plan(phase, today)) > ADVANCE_TOLERANCE_DAYS


def start_days_off_plan(program: Program, today: date) -> int:
    """Days between today and the program's start date (starting a program not started yet)."""
    return (today - program.start_date).days


def _require_reason_off_plan(subject: str, planned: date, days_off: int, reason: str, what: str) -> None:
    if abs(days_off) > ADVANCE_TOLERANCE_DAYS and not reason.strip():
        raise ApplicationError(
            MSG_REASON_OFF_PLAN.format(
                phase=subject,
                what=what,
                planned_end=planned.isoformat(),
                days=abs(days_off),
                way="ahead of" if days_off < 0 else "behind",
            ),
            status=400,
            field="reason",
        )


def _activate(*, actor: User | None, phase: Phase, day: date, reason: str, cause: str) -> None:
    phase.status, phase.actual_start = Phase.Status.ACTIVE, day
    phase.save(update_fields=["status", "actual_start"])
    transition_record(
        subject=phase,
        action="activated",
        actor=actor,
        from_state="planned",
        to_state="active",
        reason=reason,
        data={"planned_start": phase.planned_start.isoformat()},
    )
    # A phase that starts early or late takes its freeze windows with it (the frontier sprint).
    signals.phase_dates_changed.send(sender=Phase, phase_id=phase.pk, cause=cause)


def _start_program(
    *, actor: User | None, program: Program, phases: list[Phase], day: date, reason: str
) -> Phase:
    """A not-started program starts: its first phase becomes active on `day`."""
    first = phases[0]
    require_state(
        subject=f"The first phase, '{first.name}',",
        state=first.status,
        action="starting it",
        allowed=Phase.TRANSITIONS["activate"],
    )
    Program.objects.filter(pk=program.pk).update(status=Program.Status.ACTIVE)
    transition_record(
        subject=program,
        action="started",
        actor=actor,
        from_state=Program.Status.NOT_STARTED,
        to_state=Program.Status.ACTIVE,
        reason=reason,
        data={"start_date": program.start_date.isoformat(), "days_off_plan": (day - program.start_date).days},
    )
    _activate(actor=actor, phase=first, day=day, reason=reason, cause="started")
    # No gate was ready before the start (program.services.gates.gate_evaluate): evaluated again after
    # the commit, those whose criteria hold become ready now, not at the next periodic sweep.
    gates_reevaluate_for_program(program_id=program.pk, reason=f"{program.name} started", actor=actor)
    return first


@transaction.atomic
def program_advance(
    *, actor: User, program: Program, reason: str = "", shift_plan: bool = False
) -> Phase | None:
    """Leads of the program only. Complete the active phase (its exit gate passed or waived) and activate the
    next one; for a program not started yet, start its first phase today.

    With `shift_plan`, the phase that starts and every later one, their gates' due dates (and the
    freeze windows that follow them) move by the days it starts off its planned start
    (program.services.plan_shift; a reason is needed). Returns the new active phase, or None when the
    last phase completed the program."""
    policies.require_lead(actor, program, "advance phases")
    program = Program.objects.select_for_update().get(pk=program.pk)
    require_state(
        subject=program.name, state=program.status, action="advancing", allowed=Program.TRANSITIONS["advance"]
    )
    phases = list(Phase.objects.select_for_update().filter(program=program).order_by("order"))
    today = timezone.localdate()
    if program.status == Program.Status.NOT_STARTED:
        if not phases:  # pragma: no cover - every template has phases
            raise ApplicationError(f"{program.name} has no phases to start.")
        _require_reason_off_plan(
            program.name, program.start_date, start_days_off_plan(program, today), reason, "start"
        )
        if shift_plan:
            plan_shift_apply(
                actor=actor, program=program, phases=phases, starting=phases[0], today=today, reason=reason
            )
        return _start_program(actor=actor, program=program, phases=phases, day=today, reason=reason)
    current = next((p for p in phases if p.status == Phase.Status.ACTIVE), None)
    if current is None:
        raise ApplicationError(f"{program.name} has no active phase: it is {program.status}.")
    following = next((p for p in phases if p.order > current.order), None)
    if following is not None:
        require_state(
            subject=f"The next phase, '{following.name}',",
            state=following.status,
            action="activating it",
            allowed=Phase.TRANSITIONS["activate"],
        )
    exit_gate = Gate.objects.filter(phase=current, kind=Gate.Kind.EXIT).first()
    if exit_gate is not None and exit_gate.status not in (Gate.Status.PASSED, Gate.Status.WAIVED):
        raise ApplicationError(
            MSG_EXIT_NOT_DONE.format(phase=current.name, gate=exit_gate.name, status=exit_gate.status),
            extra={"gate": exit_gate.pk},
        )
    days_off = advance_days_off_plan(current, today)
    _require_reason_off_plan(current.name, current.planned_end, days_off, reason, "end")
    if shift_plan and following is not None:
        plan_shift_apply(
            actor=actor, program=program, phases=phases, starting=following, today=today, reason=reason
        )
    current.status, current.actual_end = Phase.Status.COMPLETED, today
    current.save(update_fields=["status", "actual_end"])
    closed = _close_undecided_gates(actor=actor, phase=current)
    # The history sentence ("Lena advanced Canary → Cutover: exit gate passed") reads from this row.
    transition_record(
        subject=current,
        action="completed",
        actor=actor,
        from_state="active",
        to_state="completed",
        reason=reason,
        data={
            "next_phase": following.name if following else None,
            "exit_gate": {"name": exit_gate.name, "status": exit_gate.status} if exit_gate else None,
            "planned_end": current.planned_end.isoformat(),
            "days_off_plan": days_off,
            "closed_gates": closed,
        },
    )
    signals.phase_dates_changed.send(sender=Phase, phase_id=current.pk, cause="completed")
    if following is None:
        Program.objects.filter(pk=program.pk).update(status=Program.Status.COMPLETED)
        transition_record(
            subject=program,
            action="completed",
            actor=actor,
            from_state="active",
            to_state="completed",
            reason=reason,
        )
        return None
    _activate(actor=actor, phase=following, day=today, reason=reason, cause="started")
    return following


def _close_undecided_gates(*, actor: User, phase: Phase) -> list[str]:
    """The phase's gates nobody decided (milestones: its exit gate passed or was waived) become history
    with it: closed, each with its own audit row, and no longer evaluated, listed as ready or counted
    by the approval bar (they leave Gate.UNDECIDED), and their "ready for review" notices are done.
    Their last evaluation stays as it was."""
    gates = list(
        Gate.objects.select_for_update()
        .filter(phase=phase, status__in=Gate.UNDECIDED)
        .order_by("due_date", "pk")
    )
    for gate in gates:
        transition_record(
            subject=gate,
            action="closed",
            actor=actor,
            from_state=gate.status,
            to_state=Gate.Status.CLOSED,
            reason=Gate.CLOSED_REASON,
            data={"phase": phase.name},
        )
        # "Ready for review" asked for a decision that will never come: it is no longer anyone's to-do.
        notices_clear(link=reverse("program:gate", args=[gate.pk]), events=["gate.ready"])
    Gate.objects.filter(pk__in=[g.pk for g in gates]).update(status=Gate.Status.CLOSED)
    return [gate.name for gate in gates]


def programs_start_due(today: date | None = None) -> list[int]:
    """Periodic: start every program whose start date has come (on plan: its first phase's actual
    start is the start date). Each in its own transaction; returns their ids."""
    today = today or timezone.localdate()
    started = []
    due = Program.objects.filter(status=Program.Status.NOT_STARTED, start_date__lte=today)
    for program_id in due.values_list("pk", flat=True):
        with transaction.atomic():
            program = (
                Program.objects.select_for_update()
                .filter(pk=program_id, status=Program.Status.NOT_STARTED)
                .first()
            )
            if program is None:  # started by a lead meanwhile
                continue
            phases = list(Phase.objects.select_for_update().filter(program=program).order_by("order"))
            _start_program(
                actor=None,
                program=program,
                phases=phases,
                day=program.start_date,
                reason="start date reached",
            )
            started.append(program.pk)
    return started
