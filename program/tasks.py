"""Celery tasks of the program app: each calls one service (queued through program.services.gate_queue)."""

from __future__ import annotations

from celery import shared_task

from core.outbox import queue_options
from program import services


@shared_task(**queue_options("evaluation"))  # type: ignore[untyped-decorator]  # celery ships no types
def gates_evaluate_open() -> int:
    """Periodic: queue an evaluation of every undecided gate (one waiting per gate at most)."""
    return services.gates_evaluate_for_definitions()


@shared_task(**queue_options("evaluation"))  # type: ignore[untyped-decorator]  # celery ships no types
def gate_evaluate(gate_id: int) -> int | None:
    """One gate's queued evaluation; None when the gate was decided since it was queued."""
    evaluation = services.gate_evaluate_queued(gate_id=gate_id)
    return evaluation.pk if evaluation is not None else None


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]  # celery ships no types
def gates_mark_stale(old_id: int, new_id: int) -> list[int]:
    return services.gates_mark_stale(old_definition_id=old_id, new_definition_id=new_id)


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]  # celery ships no types
def programs_start_due() -> list[int]:
    """Periodic: programs whose start date has come start their first phase."""
    return services.programs_start_due()
