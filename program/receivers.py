"""program listens to metrics' hooks (metrics never imports program).

The hooks are sent inside the transaction of the change, so the work they ask for is written to the
outbox with it and survives a broker outage (core.outbox)."""

from __future__ import annotations

from django.dispatch import receiver

from core.outbox import outbox_add
from metrics.signals import definition_superseded, observations_ingested


@receiver(observations_ingested, dispatch_uid="program.evaluate_after_ingest")
def evaluate_after_ingest(sender, *, definition_ids, **kwargs):
    from program.services import gates_evaluate_for_definitions

    gates_evaluate_for_definitions(definition_ids)


@receiver(definition_superseded, dispatch_uid="program.mark_stale")
def mark_stale(sender, *, old_id, new_id, **kwargs):
    outbox_add(task="program.tasks.mark_gates_stale", args=[old_id, new_id])
