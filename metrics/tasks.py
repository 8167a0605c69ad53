from __future__ import annotations

from celery import shared_task
from django.db import transaction

from core.outbox import queue_options
from metrics.models import IngestBatch
from metrics.signals import observations_ingested


@shared_task(**queue_options("ingest"))
def batch_announce(batch_id: int) -> list[int]:
    """One task per committed batch (never per row): tell listeners which metrics and workloads moved.
    Listeners queue their work in this transaction (outbox), so it is all queued or none."""
    batch = IngestBatch.objects.filter(pk=batch_id).values("definition_ids", "workload_ids").first()
    if batch is None:
        return []
    with transaction.atomic():
        observations_ingested.send(
            sender=IngestBatch,
            batch_id=batch_id,
            definition_ids=batch["definition_ids"],
            workload_ids=batch["workload_ids"],
        )
    return batch["definition_ids"]


@shared_task(**queue_options("celery"))
def feeds_check_stale() -> dict[str, int]:
    """Periodic: tell owner teams of feeds that went stale (once per spell); see metrics.services.feeds."""
    from metrics.services.feeds import feeds_check_stale as check

    return check()


@shared_task(**queue_options("ingest"))
def pull_prometheus() -> list[dict]:
    """Beat: pull every enabled Prometheus source once; each failure is recorded on its source."""
    from metrics.services.pull import pull_sources_run_enabled

    return [
        {"source": r.source_id, "ok": r.ok, "inserted": r.inserted, "error": r.error}
        for r in pull_sources_run_enabled()
    ]


@shared_task(**queue_options("ingest"))
def rollups_refresh() -> int:
    """Recompute the day rollups that ingest marked stale (metrics.rollups.maintain); idempotent.
    Also on beat: a refresh whose message was lost is caught up within minutes."""
    from metrics.rollups.maintain import rollups_refresh_stale

    cleared = total = rollups_refresh_stale()
    while cleared:  # marks left over beyond one transaction's limit
        cleared = rollups_refresh_stale()
        total += cleared
    return total


@shared_task(**queue_options("ingest"))
def rollups_rebuild(definition_ids: list[int]) -> int:
    """Recompute every day of these definitions (a batch that did not record the span it touched)."""
    from metrics.rollups.maintain import rollups_rebuild as rebuild

    return rebuild(definition_ids=definition_ids)
