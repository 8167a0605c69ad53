"""Gates: adding, evaluating, deciding, reopening, staleness. Their criteria: program.services.criteria."""

from __future__ import annotations

import hashlib
from datetime import date, timedelta
from typing import Any

import orjson
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Sum
from django.urls import reverse
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.notifications import notification_send
from core.services.inbox import notices_clear, notifications_mark_read_for
from core.telemetry.instruments import GATE_EVALUATION
from core.transitions import require_state
from metrics.models import MetricDefinition, Observation
from metrics.public import Window, rollup_summaries, rollups_answer
from program import policies
from program.evaluation import criterion_judge
from program.evaluation_every import every_metric_inputs
from program.models import (
    Criterion,
    CriterionResult,
    Decision,
    Evaluation,
    Gate,
    Phase,
    Program,
    ProgramMembership,
)

MSG_ALREADY_DECIDED = "Gate '{gate}' was already decided ({status}); reopen it first."
MSG_NOT_PASSING = "Gate '{gate}' cannot pass: these required criteria do not pass: {names}."
MSG_WAIVE_NEEDS_NOTE = "Waiving a gate needs a note that says why."
# Ready means a lead can decide it now: not while its program has not started, whatever the numbers say.
MSG_NOT_STARTED = "{program} has not started: its gates become ready once it starts."


GATE_ACTIONS = {
    "evaluate": "evaluating",
    "add_criterion": "adding a criterion",
    "edit_criterion": "editing a criterion",
    "delete_criterion": "deleting a criterion",
    "repin": "re-pinning criteria",
    "decide": "deciding",
    "reopen": "reopening",
}


MSG_HISTORY = "Phase '{phase}' is completed: its gates are history, so {action} is not allowed."
MSG_CLOSED = (
    "Gate '{gate}' is closed: it was not decided when its phase completed, so {action} is not allowed."
)


def require_phase_not_completed(gate: Gate, action: str) -> None:
    """History stays history: no decision, reopening or criterion change on any gate of a completed
    phase (409 naming the phase), whatever the gate's own state."""
    phase = gate.phase
    if phase.status == Phase.Status.COMPLETED:
        raise ApplicationError(MSG_HISTORY.format(phase=phase.name, action=action), status=409)


def require_gate_state(gate: Gate, action: str, message: str = "") -> None:
    require_phase_not_completed(gate, GATE_ACTIONS[action])
    if gate.status == Gate.Status.CLOSED:
        raise ApplicationError(MSG_CLOSED.format(gate=gate.name, action=GATE_ACTIONS[action]), status=409)
    require_state(
        subject=f"Gate '{gate.name}'",
        state=gate.status,
        action=GATE_ACTIONS[action],
        allowed=Gate.TRANSITIONS[action],
        message=message.format(gate=gate.name, status=gate.status),
    )


def _leads(gate: Gate) -> list[User]:
    """Who hears that a gate awaits a decision or pins a superseded metric: the program's leads."""
    return policies.members_to_notify(gate.phase.program_id, role=ProgramMembership.Role.LEAD)


def _members(gate: Gate) -> list[User]:
    """Who hears a gate's decision: every member of its program."""
    return policies.members_to_notify(gate.phase.program_id)


def _gate_link(gate: Gate) -> str:
    return reverse("program:gate", args=[gate.pk])


def _acted_on(actor: User, gate: Gate) -> None:
    """The actor's own notices about this gate are answered by acting on it: marked read with it."""
    notifications_mark_read_for(actor=actor, link=_gate_link(gate))


@transaction.atomic
def gate_add(*, actor: User, phase: Phase, name: str, kind: str, due_date: date) -> Gate:
    """Leads of the program only: a milestone or the exit gate (one per phase) of a phase not yet completed."""
    phase = Phase.objects.select_for_update().select_related("program").get(pk=phase.pk)
    policies.require_lead(actor, phase.program, "add gates")
    require_state(
        subject=f"Phase '{phase.name}'",
        state=phase.status,
        action="adding a gate",
        allowed=Phase.TRANSITIONS["add_gate"],
    )
    if kind == Gate.Kind.EXIT and Gate.objects.filter(phase=phase, kind=Gate.Kind.EXIT).exists():
        raise ApplicationError(f"{phase.name} has an exit gate already.", field="kind")
    gate = Gate.objects.create(phase=phase, name=name, kind=kind, due_date=due_date)
    transition_record(subject=gate, action="created", actor=actor, to_state=gate.status)
    return gate


def _inputs_fingerprint(program: Program, criteria: list[Criterion]) -> str:
    """What the judgements depend on, read cheaply: each criterion's fields and, per measured one,
    the count, sum and latest time of its observations on each side. A criterion over the rollup
    threshold is judged from the day rollups (metrics.rollups), so their count, sum and last refresh
    are its inputs (one query for all, no row read); the others' come from one aggregate over the
    covering index each, where a comparison sorts and ranks every value. Observations are only ever
    added."""
    now = timezone.now()
    sides_ids = [program.baseline_system_id, program.candidate_system_id]
    payload: list[Any] = [*sides_ids]
    measured = [
        (c, c.metric)
        for c in sorted(criteria, key=lambda c: c.pk)
        # The others are judged without data (manual, or an unbound slot).
        if c.kind != Criterion.Kind.MANUAL and not c.unbound_slots and c.metric is not None
    ]
    windows = [
        Window(metric.pk, c.workload_id, now - timedelta(days=c.window_days) if c.window_days else None)
        for c, metric in measured
    ]
    summaries = rollup_summaries(windows, baseline_id=sides_ids[0], candidate_id=sides_ids[1])
    for c in sorted(criteria, key=lambda c: c.pk):
        payload.append([getattr(c, f.attname) for f in Criterion._meta.concrete_fields])
        if c.kind == Criterion.Kind.EVERY_METRIC and not c.unbound_slots:
            since = now - timedelta(days=c.window_days) if c.window_days else None
            payload.append(
                every_metric_inputs(c, baseline_id=sides_ids[0], candidate_id=sides_ids[1], since=since)
            )
    for (c, metric), window, summary in zip(measured, windows, summaries, strict=True):
        if any(rollups_answer(n) for n, _, _ in summary.values()):
            payload.append(
                [metric.unit, metric.direction, metric.statistic, "rollups", sorted(summary.items())]
            )
            continue
        rows = Observation.objects.filter(definition_id=metric.pk, system_id__in=sides_ids)
        if c.workload_id:
            rows = rows.filter(workload_id=c.workload_id)
        if window.since:
            rows = rows.filter(observed_at__gte=window.since)
        sides = rows.values("system_id").annotate(n=Count("*"), total=Sum("value"), last=Max("observed_at"))
        payload.append([metric.unit, metric.direction, metric.statistic, *sides.order_by("system_id")])
    return hashlib.sha256(orjson.dumps(payload, default=str, option=orjson.OPT_NON_STR_KEYS)).hexdigest()


@GATE_EVALUATION.time()
def gate_evaluate(*, gate: Gate, actor: User | None = None) -> Evaluation:
    """Evaluate every criterion; store one result each. The same inputs twice reuse the last row,
    checked before any comparison runs.

    Without an actor it is the system evaluating (periodic task, after ingest); a person must be
    allowed by program.policies.may_evaluate. A gate of a program not started yet stays open even
    when every required criterion passes (the evaluation still stores them): starting the program
    evaluates its gates again (program.services.programs._start_program)."""
    program = gate.phase.program
    if actor is not None:
        policies.require_evaluate(actor, program)
    # A completed phase's gates keep the evidence they were left with (decided or closed).
    require_gate_state(gate, "evaluate")
    criteria = list(gate.criteria.select_related("metric", "workload", "attested_by"))
    fingerprint = _inputs_fingerprint(program, criteria)
    reused = Evaluation.objects.filter(gate=gate, fingerprint=fingerprint).first()
    judgements = []
    if reused is None:
        judgements = [
            (c, criterion_judge(c, baseline=program.baseline_system, candidate=program.candidate_system))
            for c in criteria
        ]
    failing = [c.name for c, j in judgements if c.required and j.outcome != CriterionResult.Outcome.PASS]
    with transaction.atomic():
        # Serialises evaluations of one gate: the second waits, then finds the first's row.
        gate = Gate.objects.select_for_update().select_related("phase__program__lead").get(pk=gate.pk)
        if reused is None:
            evaluation, created = Evaluation.objects.get_or_create(
                gate=gate,
                fingerprint=fingerprint,
                defaults={"all_required_pass": bool(criteria) and not failing, "failing": failing},
            )
        else:
            evaluation, created = reused, False
        if created:
            CriterionResult.objects.bulk_create(
                CriterionResult(
                    evaluation=evaluation,
                    criterion=c,
                    outcome=j.outcome,
                    value=j.value,
                    reason=j.reason,
                    evidence=j.evidence,
                )
                for c, j in judgements
            )
        else:
            evaluation.save(update_fields=["checked_at"])
        gate.last_evaluated_at = timezone.now()
        gate.save(update_fields=["last_evaluated_at"])
        if gate.status in Gate.UNDECIDED:
            # The program row is locked with the gate (the select_for_update above covers the joined
            # rows), so a start committing meanwhile is seen here; a start queues this evaluation again.
            held_back = gate.phase.program.status == Program.Status.NOT_STARTED
            ready = evaluation.all_required_pass and not held_back
            new_status = Gate.Status.READY if ready else Gate.Status.OPEN
            if new_status != gate.status:
                transition_record(
                    subject=gate,
                    action="evaluated",
                    actor=actor,
                    from_state=gate.status,
                    to_state=new_status,
                    reason="; ".join(evaluation.failing)
                    or (MSG_NOT_STARTED.format(program=gate.phase.program.name) if held_back else ""),
                )
                Gate.objects.filter(pk=gate.pk).update(status=new_status)
                if new_status != Gate.Status.READY:
                    # No longer ready: "ready for review" asks for nothing any more.
                    notices_clear(link=_gate_link(gate), events=["gate.ready"])
                if new_status == Gate.Status.READY:
                    notification_send(
                        event="gate.ready",
                        subject=f"Gate '{gate.name}' is ready for review",
                        body=f"Every required criterion of '{gate.name}' passes. A program lead can decide it.",
                        link=_gate_link(gate),
                        payload={"gate": gate.pk},
                        users=_leads(gate),
                        program_key=gate.phase.program.slug,
                    )
    return evaluation


def _evidence(gate: Gate, evaluation: Evaluation) -> dict[str, Any]:
    results = evaluation.results.select_related("criterion__metric", "criterion__workload")
    return {
        "evaluation": evaluation.pk,
        "evaluated_at": evaluation.evaluated_at.isoformat(),
        "baseline": gate.phase.program.baseline_system.key,
        "candidate": gate.phase.program.candidate_system.key,
        "criteria": [
            {
                "name": r.criterion.name,
                "kind": r.criterion.kind,
                "required": r.criterion.required,
                "metric": r.criterion.metric.ref if r.criterion.metric else None,
                "workload": r.criterion.workload.key if r.criterion.workload else None,
                "operator": r.criterion.operator,
                "threshold": r.criterion.threshold,
                "outcome": r.outcome,
                "value": r.value,
                "reason": r.reason,
                "numbers": r.evidence,
            }
            for r in results
        ],
    }


def gate_decide(*, gate: Gate, actor: User, decision: str, note: str = "") -> Decision:
    """Leads of the program only: the lead passes, fails or waives a gate; the evidence is frozen into the decision.

    Pass needs a fresh evaluation (made here) with every required criterion passing. Two leads at
    once: the conditional status update lets exactly one win; the other gets a 409."""
    policies.require_lead_of_gate(actor, gate, "decide gates")
    if decision not in Decision.Verdict.values:
        raise ApplicationError("decision must be pass, fail or waive.", status=400, field="decision")
    if decision == Decision.Verdict.WAIVE and not note.strip():
        raise ApplicationError(MSG_WAIVE_NEEDS_NOTE, status=400, field="note")
    require_gate_state(gate, "decide", message=MSG_ALREADY_DECIDED)
    evaluation = gate_evaluate(gate=gate, actor=actor)
    if decision == Decision.Verdict.PASS and not evaluation.all_required_pass:
        names = ", ".join(evaluation.failing) or "no criteria defined"
        raise ApplicationError(
            MSG_NOT_PASSING.format(gate=gate.name, names=names), extra={"failing": evaluation.failing}
        )
    target = {"pass": Gate.Status.PASSED, "fail": Gate.Status.FAILED, "waive": Gate.Status.WAIVED}[decision]
    with transaction.atomic():
        won = Gate.objects.filter(pk=gate.pk, status__in=Gate.UNDECIDED).update(status=target)
        if not won:
            current = Gate.objects.get(pk=gate.pk).status
            raise ApplicationError(MSG_ALREADY_DECIDED.format(gate=gate.name, status=current))
        gate = Gate.objects.select_related(
            "phase__program__baseline_system", "phase__program__candidate_system", "phase__program__lead"
        ).get(pk=gate.pk)
        evidence = _evidence(gate, evaluation)
        evidence["stale"] = gate.stale
        try:
            with transaction.atomic():
                record = Decision.objects.create(
                    gate=gate,
                    decision=decision,
                    note=note,
                    decided_by=actor,
                    evaluation=evaluation,
                    evidence=evidence,
                )
        except IntegrityError:
            raise ApplicationError(MSG_ALREADY_DECIDED.format(gate=gate.name, status=target)) from None
        transition_record(
            subject=gate,
            action="decided",
            actor=actor,
            from_state="undecided",
            to_state=target,
            reason=note,
            data={"decision": record.pk},
        )
        notification_send(
            event="gate.decided",
            subject=f"Gate '{gate.name}' {target}",
            body=f"{actor.get_username()} decided '{gate.name}': {decision}. {note}".strip(),
            link=_gate_link(gate),
            payload={"gate": gate.pk, "decision": decision},
            users=_members(gate),
            program_key=gate.phase.program.slug,
        )
        _acted_on(actor, gate)
        # Decided: "ready for review" is done for every lead it went to, not only the one who decided.
        notices_clear(link=_gate_link(gate), events=["gate.ready"])
    return record


@transaction.atomic
def gate_reopen(*, gate: Gate, actor: User, reason: str) -> Gate:
    """Program leads only: withdraw the gate's decision (kept, marked reopened) and open it again."""
    policies.require_lead_of_gate(actor, gate, "reopen gates")
    if not reason.strip():
        raise ApplicationError("Reopening a gate needs a reason.", status=400, field="reason")
    gate = Gate.objects.select_for_update().select_related("phase").get(pk=gate.pk)
    require_gate_state(gate, "reopen")
    Decision.objects.filter(gate=gate, reopened_at__isnull=True).update(
        reopened_at=timezone.now(), reopen_reason=reason
    )
    transition_record(
        subject=gate, action="reopened", actor=actor, from_state=gate.status, to_state="open", reason=reason
    )
    gate.status = Gate.Status.OPEN
    gate.save(update_fields=["status"])
    _acted_on(actor, gate)
    return gate


def gates_mark_stale(*, old_definition_id: int, new_definition_id: int) -> list[int]:
    """Gates pinning a definition that was superseded: flag them and tell their leads."""
    with transaction.atomic():
        pinned = Criterion.objects.filter(metric_id=old_definition_id).values("gate_id")
        gates = list(
            Gate.objects.select_for_update(of=("self",))
            .filter(pk__in=pinned, stale=False)
            .select_related("phase__program__lead")
        )
        new = MetricDefinition.objects.get(pk=new_definition_id)
        for gate in gates:
            gate.stale = True
            gate.save(update_fields=["stale"])
            transition_record(subject=gate, action="stale", reason=f"{new.ref} replaced the pinned version")
            notification_send(
                event="gate.stale",
                subject=f"Gate '{gate.name}' pins a superseded metric",
                body=f"{new.ref} is now active; the gate's criteria still use the older version.",
                link=_gate_link(gate),
                payload={"gate": gate.pk, "metric": new.ref},
                users=_leads(gate),
                program_key=gate.phase.program.slug,
            )
    return [gate.pk for gate in gates]
