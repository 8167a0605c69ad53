"""Rollups follow ingest: each batch marks the days it touched and queues one coalesced refresh."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from django.dispatch import receiver

from core.outbox import outbox_add
from metrics.models import IngestBatch
from metrics.rollups.maintain import rollups_mark_stale
from metrics.signals import observations_ingested

REFRESH_TASK = "metrics.tasks.rollups_refresh"
REBUILD_TASK = "metrics.tasks.rollups_rebuild"


@receiver(observations_ingested, dispatch_uid="metrics.rollups_after_ingest")
def rollups_after_ingest(
    sender: object, *, batch_id: int, definition_ids: list[int], workload_ids: list[int], **kwargs: Any
) -> None:
    span = IngestBatch.objects.filter(pk=batch_id).values_list("observed_from", "observed_to").first()
    if span is None or None in span:
        # A batch that did not record its span (written before it was kept): rebuild its metrics whole.
        outbox_add(task=REBUILD_TASK, args=[sorted(definition_ids)])
        return
    # `None in span` above is a check mypy cannot narrow the tuple's items by: both are set here.
    rollups_mark_stale(
        definition_ids=definition_ids,
        workload_ids=workload_ids,
        start=cast(datetime, span[0]),
        end=cast(datetime, span[1]),
    )
    # Any refresh not started yet reads every mark, this one's too: one queued refresh is enough.
    outbox_add(task=REFRESH_TASK, key="rollups_refresh")
