from __future__ import annotations

from celery import shared_task

from core.outbox import queue_options


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


@shared_task(**queue_options("celery"))
def observations_partitions_create() -> list[str]:
    """Beat, daily: the observation table's partitions for this month and the next three; the names
    of those it had to create (see metrics.partitions)."""
    from metrics.partitions import observations_partitions_create as create

    return create()
