from __future__ import annotations

from celery import shared_task

from core.outbox import queue_options
from freeze.services import (
    exceptions_expire,
    exceptions_warn_expiring,
    overrides_warn_overdue,
    window_for_frontier,
    windows_follow_phase,
)


@shared_task(**queue_options("celery"))
def expire_exceptions() -> list[int]:
    return exceptions_expire()


@shared_task(**queue_options("celery"))
def warn_expiring_exceptions() -> list[int]:
    return exceptions_warn_expiring()


@shared_task(**queue_options("celery"))
def warn_overdue_overrides() -> list[int]:
    return overrides_warn_overdue()


@shared_task(**queue_options("celery"))
def create_frontier_window(program_id: int) -> int | None:
    window = window_for_frontier(program_id=program_id)
    return window.pk if window else None


@shared_task(**queue_options("celery"))
def follow_phase(phase_id: int, cause: str = "re-planned") -> int:
    return windows_follow_phase(phase_id=phase_id, cause=cause)
