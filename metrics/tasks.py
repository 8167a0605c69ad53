from __future__ import annotations

from celery import shared_task

from metrics.models import IngestBatch
from metrics.signals import observations_ingested


@shared_task(acks_late=True)
def batch_announce(batch_id: int) -> list[int]:
    """One task per committed batch (never per row): tell listeners which metrics and workloads moved."""
    batch = IngestBatch.objects.filter(pk=batch_id).values("definition_ids", "workload_ids").first()
    if batch is None:
        return []
    observations_ingested.send(
        sender=IngestBatch,
        batch_id=batch_id,
        definition_ids=batch["definition_ids"],
        workload_ids=batch["workload_ids"],
    )
    return batch["definition_ids"]
