"""Creating programs from templates, re-planning phases, advancing the active phase."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.transitions import require_state
from metrics.models import MetricDefinition, System, Workload
from program import policies, signals
from program.blueprints import blueprint_load, blueprint_slots
from program.models import Criterion, Gate, Phase, Program
from program.months import month_end, month_start
from program.services.bindings import Bound, bindings_resolve, bound_label
from program.services.memberships import membership_of_creator

MSG_EXIT_NOT_DONE = "The {phase} exit gate '{gate}' is {status}: pass or waive it before advancing."
MSG_REASON_OFF_PLAN = "{phase} was planned to end on {planned_end}; advancing today is {days} days {way} plan. Say why (reason)."
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

    The first phase is active from the start; planned dates follow the template's months. `bindings`
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
            status=Phase.Status.ACTIVE if order == 1 else Phase.Status.PLANNED,
            actual_start=start_date if order == 1 else None,
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
def phase_replan(*, actor: User, phase: Phase, planned_start: date, planned_end: date, reason: str) -> Phase:
    """Leads of the program only. Move a phase's planned dates; the old dates stay in the history
    (pghistory + transition)."""
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
    phase = Phase.objects.select_for_update().get(pk=phase.pk)
    require_state(
        subject=f"Phase '{phase.name}'",
        state=phase.status,
        action="re-planning",
        allowed=Phase.TRANSITIONS["replan"],
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
        },
    )
    signals.phase_dates_changed.send(sender=Phase, phase_id=phase.pk, cause="re-planned")
    return phase


def advance_days_off_plan(phase: Phase, today: date) -> int:
    """Days between today and the phase's planned end: negative is early, positive late."""
    return (today - phase.planned_end).days


def advance_needs_reason(phase: Phase, today: date) -> bool:
    return abs(advance_days_off_plan(phase, today)) > ADVANCE_TOLERANCE_DAYS


@transaction.atomic
def program_advance(*, actor: User, program: Program, reason: str = "") -> Phase | None:
    """Leads of the program only. Complete the active phase (its exit gate passed or waived) and activate the
    next one.

    Returns the new active phase, or None when the last phase completed the program."""
    policies.require_lead(actor, program, "advance phases")
    program = Program.objects.select_for_update().get(pk=program.pk)
    require_state(
        subject=program.name, state=program.status, action="advancing", allowed=Program.TRANSITIONS["advance"]
    )
    phases = list(Phase.objects.select_for_update().filter(program=program).order_by("order"))
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
    today = timezone.localdate()
    days_off = advance_days_off_plan(current, today)
    if advance_needs_reason(current, today) and not reason.strip():
        raise ApplicationError(
            MSG_REASON_OFF_PLAN.format(
                phase=current.name,
                planned_end=current.planned_end.isoformat(),
                days=abs(days_off),
                way="ahead of" if days_off < 0 else "behind",
            ),
            status=400,
            field="reason",
        )
    current.status, current.actual_end = Phase.Status.COMPLETED, today
    current.save(update_fields=["status", "actual_end"])
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
    following.status, following.actual_start = Phase.Status.ACTIVE, today
    following.save(update_fields=["status", "actual_start"])
    transition_record(
        subject=following,
        action="activated",
        actor=actor,
        from_state="planned",
        to_state="active",
        reason=reason,
        data={"planned_start": following.planned_start.isoformat()},
    )
    # A phase that starts early or late takes its freeze windows with it (the frontier sprint).
    signals.phase_dates_changed.send(sender=Phase, phase_id=following.pk, cause="started")
    return following
