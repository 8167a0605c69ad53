from __future__ import annotations

from celery import shared_task

from core.outbox import queue_options
from program.models import Gate
from program.services import gate_evaluate, gates_evaluate_for_definitions, gates_mark_stale


@shared_task(**queue_options("evaluation"))
def evaluate_open_gates() -> int:
    """Periodic: queue an evaluation of every undecided gate (one waiting per gate at most)."""
    return gates_evaluate_for_definitions()


@shared_task(**queue_options("evaluation"))
def evaluate_gate(gate_id: int) -> int | None:
    """One gate's queued evaluation. A gate decided since it was queued needs none (checked first,
    before the costly comparisons)."""
    gate = (
        Gate.objects.filter(pk=gate_id, status__in=Gate.UNDECIDED)
        .select_related("phase__program__baseline_system", "phase__program__candidate_system")
        .first()
    )
    if gate is None:
        return None
    return gate_evaluate(gate=gate).pk


@shared_task(**queue_options("celery"))
def mark_gates_stale(old_id: int, new_id: int) -> list[int]:
    return gates_mark_stale(old_definition_id=old_id, new_definition_id=new_id)
