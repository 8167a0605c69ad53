from __future__ import annotations

from celery import shared_task

from program.models import Gate
from program.services import gate_evaluate, gates_evaluate_for_definitions, gates_mark_stale


@shared_task(acks_late=True)
def evaluate_open_gates() -> int:
    """Periodic: re-evaluate every undecided gate."""
    count = 0
    for gate in Gate.objects.filter(status__in=Gate.UNDECIDED).select_related(
        "phase__program__baseline_system", "phase__program__candidate_system"
    ):
        gate_evaluate(gate=gate)
        count += 1
    return count


@shared_task(acks_late=True)
def evaluate_gates_for_definitions(definition_ids: list[int]) -> int:
    return gates_evaluate_for_definitions(definition_ids)


@shared_task(acks_late=True)
def mark_gates_stale(old_id: int, new_id: int) -> list[int]:
    return gates_mark_stale(old_definition_id=old_id, new_definition_id=new_id)
