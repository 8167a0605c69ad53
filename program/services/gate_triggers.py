"""Re-evaluating gates because something outside their data changed (a freeze exception approved,
revoked or expired), with the reason written on each gate's history in the same transaction.

An evaluation queued after ingest needs no words: its data changed. One queued for an outside event
would otherwise look like nothing happened, so the gate's history says which event asked for it
(action `reevaluation_requested`, the reason in words). Queued evaluations coalesce per gate
(gate_evaluation_queue): the history keeps every reason even when one evaluation serves them all."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet

from core.audit import transition_record
from program.models import Gate
from program.services.gate_queue import gate_evaluation_queue

REEVALUATION_REQUESTED = "reevaluation_requested"


def gates_using_metric_keys(metric_keys: Iterable[str]) -> QuerySet[Gate]:
    """Undecided gates with a criterion on any version of these metrics (one query)."""
    return (
        Gate.objects.filter(status__in=Gate.UNDECIDED, criteria__metric__key__in=list(metric_keys))
        .order_by("pk")
        .distinct()
    )


def gates_reevaluate_for_metric_keys(
    *, metric_keys: Iterable[str], reason: str, actor: User | None = None
) -> list[int]:
    """Call inside the caller's transaction: record `reason` on each undecided gate using these metrics
    and queue its evaluation through the outbox. Returns the gates' ids. No role: the caller's service
    checked it; `actor` (None: the system) is who the gates' history names."""
    keys = sorted(set(metric_keys))
    if not keys:
        return []
    return _reevaluate(gates_using_metric_keys(keys), reason=reason, actor=actor, data={"metrics": keys})


def gates_reevaluate_for_program(*, program_id: int, reason: str, actor: User | None = None) -> list[int]:
    """Call inside the caller's transaction, as gates_reevaluate_for_metric_keys does, for every
    undecided gate of the program: it has just started, and no gate is ready before that
    (program.services.gates.gate_evaluate), whatever its numbers said."""
    gates = Gate.objects.filter(status__in=Gate.UNDECIDED, phase__program_id=program_id).order_by("pk")
    return _reevaluate(gates, reason=reason, actor=actor, data=None)


def _reevaluate(
    gates: QuerySet[Gate], *, reason: str, actor: User | None, data: dict[str, Any] | None
) -> list[int]:
    found = list(gates)
    for gate in found:
        transition_record(subject=gate, action=REEVALUATION_REQUESTED, actor=actor, reason=reason, data=data)
        gate_evaluation_queue(gate_id=gate.pk)
    return [gate.pk for gate in found]
