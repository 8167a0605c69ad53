from __future__ import annotations

from celery import shared_task

from freeze.services import (
    exceptions_expire,
    exceptions_warn_expiring,
    window_for_frontier,
    windows_follow_phase,
)


@shared_task(acks_late=True)
def expire_exceptions() -> list[int]:
    return exceptions_expire()


@shared_task(acks_late=True)
def warn_expiring_exceptions() -> list[int]:
    return exceptions_warn_expiring()


@shared_task(acks_late=True)
def create_frontier_window(program_id: int) -> int | None:
    window = window_for_frontier(program_id=program_id)
    return window.pk if window else None


@shared_task(acks_late=True)
def follow_phase(phase_id: int) -> int:
    return windows_follow_phase(phase_id=phase_id)
