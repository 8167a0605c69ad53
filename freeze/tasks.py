"""The freeze app's Celery tasks: each calls one service (freeze.services) and nothing else."""

from __future__ import annotations

from celery import shared_task

from core.outbox import queue_options
from freeze import services

# Celery ships no type information: shared_task is an untyped decorator to mypy.


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def exceptions_expire() -> list[int]:
    return services.exceptions_expire()


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def exceptions_warn_expiring() -> list[int]:
    return services.exceptions_warn_expiring()


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def overrides_warn_overdue() -> list[int]:
    return services.overrides_warn_overdue()


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def frontier_window_create(program_id: int) -> int | None:
    window = services.window_for_frontier(program_id=program_id)
    return window.pk if window else None


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def windows_follow_phase(phase_id: int, cause: str = "re-planned") -> int:
    return services.windows_follow_phase(phase_id=phase_id, cause=cause)
