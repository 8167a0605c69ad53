"""program listens to metrics' hooks (metrics never imports program)."""

from __future__ import annotations

from django.dispatch import receiver

from metrics.signals import definition_superseded, observations_ingested


@receiver(observations_ingested, dispatch_uid="program.evaluate_after_ingest")
def evaluate_after_ingest(sender, *, definition_ids, **kwargs):
    from program.tasks import evaluate_gates_for_definitions

    evaluate_gates_for_definitions.delay(list(definition_ids))


@receiver(definition_superseded, dispatch_uid="program.mark_stale")
def mark_stale(sender, *, old_id, new_id, **kwargs):
    from program.tasks import mark_gates_stale

    mark_gates_stale.delay(old_id, new_id)
