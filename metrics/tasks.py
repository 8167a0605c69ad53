from __future__ import annotations

from typing import Any

from celery import shared_task

from core.outbox import queue_options

# celery ships no type information, so under --strict every `shared_task` is an untyped decorator; the
# default run does not report that, hence `unused-ignore` beside it.


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def feeds_check_stale() -> dict[str, int]:
    """Periodic: tell owner teams of feeds that went stale (once per spell); see metrics.services.feeds."""
    from metrics.services.feeds import feeds_check_stale as check

    return check()


@shared_task(**queue_options("ingest"))  # type: ignore[untyped-decorator]
def pull_sources_scrape() -> list[dict[str, Any]]:
    """Beat: pull every enabled Prometheus source once; each failure is recorded on its source."""
    from metrics.services.pull import pull_sources_run_enabled

    return [
        {"source": r.source_id, "ok": r.ok, "inserted": r.inserted, "error": r.error}
        for r in pull_sources_run_enabled()
    ]


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def observations_partitions_create() -> list[str]:
    """Beat, daily: the observation table's partitions for this month and the next three; the names
    of those it had to create (see metrics.partitions)."""
    from metrics.partitions import observations_partitions_create as create

    return create()


@shared_task(**queue_options("celery"))  # type: ignore[untyped-decorator]
def observations_partitions_drop() -> list[str]:
    """Beat, daily: drop the monthly partitions older than OBSERVATIONS_KEEP_MONTHS whose rollups are
    complete (metrics.retention); the names of those dropped."""
    from metrics.retention import observations_partitions_drop as drop

    return drop()


@shared_task(**queue_options("ingest"))  # type: ignore[untyped-decorator]
def rollups_refresh() -> int:
    """Bring the day rollups up to the rows (metrics.rollups): recompute the days corrections marked
    stale, then fold the deltas batches wrote; idempotent. Also on beat: a refresh whose message was
    lost is caught up within minutes. How many marks were cleared plus rollup rows folded."""
    from metrics.rollups.incremental import rollups_fold
    from metrics.rollups.maintain import rollups_refresh_stale

    cleared = total = rollups_refresh_stale()
    while cleared:  # marks left over beyond one transaction's limit
        cleared = rollups_refresh_stale()
        total += cleared
    return total + rollups_fold()


@shared_task(**queue_options("ingest"))  # type: ignore[untyped-decorator]
def rollups_medians_recompute() -> int:
    """Beat, nightly: the exact median of the days before today whose folds nulled it (see
    metrics.rollups.maintain.rollups_medians_recompute); the charts read the buckets' until then."""
    from datetime import UTC, datetime

    from metrics.rollups.maintain import rollups_medians_recompute as recompute

    today = datetime.now(UTC).date()
    done = total = recompute(before=today)
    while done:  # more days than one call's limit
        done = recompute(before=today)
        total += done
    return total


@shared_task(**queue_options("ingest"))  # type: ignore[untyped-decorator]
def rollups_rebuild(definition_ids: list[int]) -> int:
    """Recompute every day of these definitions (a batch that did not record the span it touched)."""
    from metrics.rollups.maintain import rollups_rebuild as rebuild

    return rebuild(definition_ids=definition_ids)
