"""Withdrawing observations a caller wrote and now knows to be wrong (an incident whose times were
corrected). The natural key refuses another value for a stored run, so a correction is delete + write;
the days the deleted rows covered are marked for the rollup refresh in the same transaction."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max, Min

from core.outbox import outbox_add
from metrics.models import Observation
from metrics.rollups.maintain import rollups_mark_stale
from metrics.rollups.receivers import REFRESH_TASK


def observations_withdraw(*, definition_ids: list[int], run_id: str) -> int:
    """Delete the observations of these definitions in run `run_id`; how many went. Call it in the
    transaction of the change that made them wrong."""
    if not definition_ids or not run_id:
        return 0
    rows = Observation.objects.filter(definition_id__in=definition_ids, run_id=run_id)
    with transaction.atomic():
        span = rows.aggregate(first=Min("observed_at"), last=Max("observed_at"))
        workload_ids = sorted(set(rows.values_list("workload_id", flat=True)))
        deleted, _ = rows.delete()
        if deleted:
            rollups_mark_stale(
                definition_ids=definition_ids,
                workload_ids=workload_ids,
                start=span["first"],
                end=span["last"],
            )
            outbox_add(task=REFRESH_TASK, key="rollups_refresh")
    return deleted
