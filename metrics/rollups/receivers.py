"""Rollups follow ingest: each batch wrote its deltas with its rows (metrics.rollups.incremental); one
coalesced refresh folds them."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from core.outbox import outbox_add
from metrics.signals import observations_ingested

REFRESH_TASK = "metrics.tasks.rollups_refresh"


@receiver(observations_ingested, dispatch_uid="metrics.rollups_after_ingest")
def rollups_after_ingest(sender: object, **kwargs: Any) -> None:
    # Any refresh not started yet folds every committed delta, this batch's too: one queued is enough.
    outbox_add(task=REFRESH_TASK, key="rollups_refresh")
