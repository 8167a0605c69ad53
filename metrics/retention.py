"""Retention of raw observations: months older than OBSERVATIONS_KEEP_MONTHS lose their rows; their day
rollups stay, and comparisons over them read the rollups (docs/operations.md).

A beat task detaches and drops each monthly partition (metrics.partitions) wholly before the horizon,
but only once its rollups are complete: no stale mark, no delta waiting to be folded and no median still
to be computed for any of its days. A month that is not ready is left for the next run. On Citus the
months come from its time_partitions view; its drop_old_time_partitions is not used, as it would not
wait for the rollups. Rows of old
months held by the DEFAULT partition (a month that never had a partition of its own) are not touched.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from core.citus import citus_mode
from metrics.models import ObservationMonthDropped
from metrics.partitions import (
    ADVISORY_LOCK,
    TABLE,
    month_add,
    month_start,
    partition_name,
    partitions_existing,
)

logger = logging.getLogger(__name__)

# The detach takes an exclusive lock on the observation table: rather than queue every reader behind a
# long query it waits for, give up and try again the next night.
LOCK_TIMEOUT = "5s"

# Why a month before the horizon is not dropped yet: work the rollups still need its rows for.
PENDING_SQL = """
SELECT EXISTS (SELECT 1 FROM metrics_rollupstale WHERE day >= %(first)s AND day < %(end)s)
    OR EXISTS (SELECT 1 FROM metrics_rollupdelta WHERE day >= %(first)s AND day < %(end)s)
    OR EXISTS (SELECT 1 FROM metrics_observationrollup
               WHERE day >= %(first)s AND day < %(end)s AND median IS NULL)
"""


def retention_horizon(now: datetime | None = None) -> datetime | None:
    """The first moment whose rows are kept: the start of the month OBSERVATIONS_KEEP_MONTHS before
    this one (the current month counts as one). None: every row is kept (the default)."""
    months = settings.OBSERVATIONS_KEEP_MONTHS
    if months is None:
        return None
    return month_add(month_start(now or timezone.now()), -(months - 1))


def reaches_before_horizon(since: datetime | None, now: datetime | None = None) -> bool:
    """Whether a window from `since` (None: from the first row) may ask for rows retention drops. Such a
    window is read from the rollups alone, whatever its size: the rows may be gone."""
    horizon = retention_horizon(now)
    return horizon is not None and (since is None or since < horizon)


def _month_of(name: str) -> date | None:
    prefix = f"{TABLE}_y"
    if not name.startswith(prefix) or name == f"{TABLE}_default":
        return None
    year, month = name.removeprefix(prefix).split("m")
    return date(int(year), int(month), 1)


def observations_partitions_drop(*, now: datetime | None = None) -> list[str]:
    """Detach and drop every monthly partition wholly before the retention horizon whose rollups are
    complete, each in its own transaction with an audit row; the names of those dropped."""
    horizon = retention_horizon(now)
    if horizon is None:
        return []
    old = _months_before(horizon)
    dropped = []
    for month in old:
        try:
            if _partition_drop(month):
                dropped.append(partition_name(_midnight(month)))
        except OperationalError as exc:  # the lock not had within LOCK_TIMEOUT: the next run tries again
            logger.warning("retention: %s not dropped this time: %s", partition_name(_midnight(month)), exc)
    return dropped


def _months_before(horizon: datetime) -> list[date]:
    """The months whose partitions end by the horizon: on Citus from its time_partitions view (the
    ranges Citus keeps of the partitions it made), on PostgreSQL from the partitions' names."""
    if citus_mode():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT from_value::timestamptz FROM time_partitions WHERE parent_table = %s::regclass"
                " AND to_value::timestamptz <= %s ORDER BY 1",
                [TABLE, horizon],
            )
            return [month_start(start).date() for (start,) in cursor.fetchall()]
    return sorted(
        month
        for name in partitions_existing()
        if (month := _month_of(name)) is not None and month < horizon.date()
    )


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, 1, tzinfo=UTC)


def _partition_drop(month: date) -> bool:
    name = partition_name(_midnight(month))
    bounds = {"first": month, "end": month_add(_midnight(month), 1).date()}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [ADVISORY_LOCK])
        cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        # Detached first: from here no batch can add rows (nor so deltas or marks) to this month's
        # partition, so what the check below sees is final.
        cursor.execute(f"ALTER TABLE {TABLE} DETACH PARTITION {name}")
        cursor.execute(PENDING_SQL, bounds)
        if cursor.fetchone()[0]:
            logger.info("retention: %s kept for now, its rollups are not complete yet", name)
            transaction.set_rollback(True)
            return False
        cursor.execute(f"SELECT count(*) FROM {name}")
        rows = cursor.fetchone()[0]
        cursor.execute(f"DROP TABLE {name}")
        ObservationMonthDropped.objects.create(month=month, rows=rows)
    logger.info("retention: dropped %s (%d rows); its days are read from the rollups", name, rows)
    return True
