"""Rollups follow ingest: each batch marks the days it touched and queues one coalesced refresh."""

from __future__ import annotations

from django.dispatch import receiver

from core.outbox import outbox_add
from metrics.models import IngestBatch
from metrics.rollups.maintain import rollups_mark_stale
from metrics.signals import observations_ingested

REFRESH_TASK = "metrics.tasks.rollups_refresh"
REBUILD_TASK = "metrics.tasks.rollups_rebuild"


@receiver(observations_ingested, dispatch_uid="metrics.rollups_after_ingest")
def rollups_after_ingest(sender, *, batch_id, definition_ids, workload_ids, **kwargs):
    span = IngestBatch.objects.filter(pk=batch_id).values_list("observed_from", "observed_to").first()
    if span is None or None in span:
        # A batch that did not record its span (written before it was kept): rebuild its metrics whole.
        outbox_add(task=REBUILD_TASK, args=[sorted(definition_ids)])
        return
    rollups_mark_stale(definition_ids=definition_ids, workload_ids=workload_ids, start=span[0], end=span[1])
    # Any refresh not started yet reads every mark, this one's too: one queued refresh is enough.
    outbox_add(task=REFRESH_TASK, key="rollups_refresh")
