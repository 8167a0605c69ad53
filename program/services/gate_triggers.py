"""Re-evaluating gates because something outside their data changed (a freeze exception approved,
revoked or expired), with the reason written on each gate's history in the same transaction.

An evaluation queued after ingest needs no words: its data changed. One queued for an outside event
would otherwise look like nothing happened, so the gate's history says which event asked for it
(action `reevaluation_requested`, the reason in words). Queued evaluations coalesce per gate
(gate_evaluation_queue): the history keeps every reason even when one evaluation serves them all."""

from __future__ import annotations

from collections.abc import Iterable

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
    gates = list(gates_using_metric_keys(keys))
    for gate in gates:
        transition_record(
            subject=gate,
            action=REEVALUATION_REQUESTED,
            actor=actor,
            reason=reason,
            data={"metrics": keys},
        )
        gate_evaluation_queue(gate_id=gate.pk)
    return [gate.pk for gate in gates]
