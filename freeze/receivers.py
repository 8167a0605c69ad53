"""freeze listens to program's hooks (program never imports freeze).

The hooks are sent inside the transaction of the change, so the work they ask for is written to the
outbox with it and survives a broker outage (core.outbox)."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from core.outbox import outbox_add
from program.models import Phase
from program.services.plan_shift import PlanMove
from program.signals import phase_dates_changed, plan_shift_previewed, program_created


@receiver(program_created, dispatch_uid="freeze.frontier_window")
def frontier_window(sender: object, *, program_id: int, **kwargs: Any) -> None:
    outbox_add(task="freeze.tasks.frontier_window_create", args=[program_id])


@receiver(phase_dates_changed, dispatch_uid="freeze.follow_phase")
def follow_phase(sender: object, *, phase_id: int, cause: str = "re-planned", **kwargs: Any) -> None:
    outbox_add(task="freeze.tasks.windows_follow_phase", args=[phase_id, cause])


@receiver(plan_shift_previewed, dispatch_uid="freeze.preview_follow")
def preview_follow(sender: object, *, phases: list[Phase], **kwargs: Any) -> list[PlanMove]:
    """The windows that would follow the shifted phases, for the advance preview."""
    from freeze.services import windows_follow_preview

    return windows_follow_preview(phases=phases)
