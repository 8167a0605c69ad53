"""freeze listens to program's hooks (program never imports freeze)."""

from __future__ import annotations

from django.dispatch import receiver

from program.signals import phase_replanned, program_created


@receiver(program_created, dispatch_uid="freeze.frontier_window")
def frontier_window(sender, *, program_id, **kwargs):
    from freeze.tasks import create_frontier_window

    create_frontier_window.delay(program_id)


@receiver(phase_replanned, dispatch_uid="freeze.follow_phase")
def follow_phase(sender, *, phase_id, **kwargs):
    from freeze.tasks import follow_phase as task

    task.delay(phase_id)
