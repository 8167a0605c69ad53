"""Gate evaluations and staleness marks through the outbox (core.outbox): queued inside the caller's
transaction, run by program.tasks after the commit. Every program task name is written here."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Q

from core.outbox import outbox_add
from metrics.models import MetricDefinition
from program.models import Criterion, Evaluation, Gate
from program.services.gates import gate_evaluate

TASK_GATE_EVALUATE = "program.tasks.gate_evaluate"
TASK_GATES_MARK_STALE = "program.tasks.gates_mark_stale"


def gate_evaluation_queue(*, gate_id: int) -> bool:
    """Queue an evaluation of the gate (program.tasks.gate_evaluate) in this transaction. A gate has at
    most one waiting: a second request joins it, since it has read nothing yet. True if queued."""
    key = f"gate-evaluate:{gate_id}"
    return outbox_add(task=TASK_GATE_EVALUATE, args=[gate_id], key=key) is not None


def gates_evaluate_for_definitions(definition_ids: Iterable[int] | None = None) -> int:
    """Queue the evaluation of each undecided gate whose criteria use these definitions (after an
    ingest batch), or of every undecided gate. An every-metric criterion reads every active
    definition (never a draft's shadow rows). Returns how many were queued, not joined."""
    gates = Gate.objects.filter(status__in=Gate.UNDECIDED)
    if definition_ids is not None:
        ids = list(definition_ids)
        reads = Q(criteria__metric_id__in=ids)
        if MetricDefinition.objects.filter(pk__in=ids, status=MetricDefinition.Status.ACTIVE).exists():
            reads |= Q(criteria__kind=Criterion.Kind.EVERY_METRIC)
        gates = gates.filter(reads)
    gate_ids = gates.order_by("pk").values_list("pk", flat=True).distinct()
    return sum(gate_evaluation_queue(gate_id=gate_id) for gate_id in gate_ids)


def gate_evaluate_queued(*, gate_id: int) -> Evaluation | None:
    """Run one queued evaluation, as the system. A gate decided (or deleted) since it was queued needs
    none: checked first, before the costly comparisons. None when skipped."""
    gate = (
        Gate.objects.filter(pk=gate_id, status__in=Gate.UNDECIDED)
        .select_related("phase__program__baseline_system", "phase__program__candidate_system")
        .first()
    )
    if gate is None:
        return None
    return gate_evaluate(gate=gate)


def gates_mark_stale_queue(*, old_definition_id: int, new_definition_id: int) -> int | None:
    """Queue program.services.gates_mark_stale for a superseded definition, in this transaction."""
    return outbox_add(task=TASK_GATES_MARK_STALE, args=[old_definition_id, new_definition_id])
