"""The observation table's monthly partitions (by observed_at, UTC), created ahead of the data.

metrics_observation is partitioned by range of observed_at, one partition a month, plus a DEFAULT
partition that catches rows of a month that has none (far past or future, or a missed beat). A beat
task keeps partitions ready for the current month and the next `months_ahead`; a month whose rows
already sit in DEFAULT gets them moved into its new partition in the same transaction, since
PostgreSQL refuses a new partition whose range DEFAULT already holds rows of.

In the Citus mode (core.citus) a month is made by Citus's create_time_partitions and renamed to the same
name: attaching a local table, as below, would leave its rows behind on the coordinator, invisible.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from core.citus import citus_mode

TABLE = "metrics_observation"
DEFAULT_PARTITION = f"{TABLE}_default"
# One run at a time: two creating the same month would race between the check and the attach.
ADVISORY_LOCK = 0x6F62_7370  # "obsp"
MONTHS_AHEAD = 3


def month_start(moment: datetime) -> datetime:
    moment = moment.astimezone(UTC)
    return datetime(moment.year, moment.month, 1, tzinfo=UTC)


def month_add(month: datetime, months: int) -> datetime:
    index = month.year * 12 + month.month - 1 + months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def partition_name(month: datetime) -> str:
    return f"{TABLE}_y{month:%Y}m{month:%m}"


def partitions_existing() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = %s::regclass ORDER BY c.relname",
            [TABLE],
        )
        return [name for (name,) in cursor.fetchall()]


def _partition_attach(cursor: CursorWrapper, month: datetime) -> None:
    """Create `month`'s partition, taking over the rows DEFAULT holds for it, and attach it.

    Attaching (not CREATE … PARTITION OF) locks the parent only SHARE UPDATE EXCLUSIVE, so ingest
    into other months goes on meanwhile; DEFAULT is locked while it is checked.
    """
    name, low, high = partition_name(month), month.isoformat(), month_add(month, 1).isoformat()
    cursor.execute(f"CREATE TABLE {name} (LIKE {TABLE} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
    cursor.execute(
        f"WITH moved AS (DELETE FROM {DEFAULT_PARTITION} WHERE observed_at >= %s AND observed_at < %s"
        f" RETURNING *) INSERT INTO {name} SELECT * FROM moved",
        [low, high],
    )
    cursor.execute(f"ALTER TABLE {TABLE} ATTACH PARTITION {name} FOR VALUES FROM ('{low}') TO ('{high}')")


def _partition_create_citus(cursor: CursorWrapper, month: datetime) -> None:
    """`month`'s partition on Citus: made (and distributed, co-located) by create_time_partitions and
    given this module's name. Rows DEFAULT holds of it are set aside first and put back through it."""
    name, low, high = partition_name(month), month.isoformat(), month_add(month, 1).isoformat()
    cursor.execute(
        f"SELECT EXISTS (SELECT 1 FROM {DEFAULT_PARTITION} WHERE observed_at >= %s AND observed_at < %s)",
        [low, high],
    )
    (waiting,) = cursor.fetchone()
    if waiting:
        cursor.execute(
            f"CREATE TEMP TABLE partition_moved ON COMMIT DROP AS SELECT * FROM {DEFAULT_PARTITION}"
            " WHERE observed_at >= %s AND observed_at < %s",
            [low, high],
        )
        cursor.execute(
            f"DELETE FROM {DEFAULT_PARTITION} WHERE observed_at >= %s AND observed_at < %s", [low, high]
        )
    cursor.execute("SELECT create_time_partitions(%s, '1 month', %s, %s)", [TABLE, high, low])
    cursor.execute(
        "SELECT partition::text FROM time_partitions"
        " WHERE parent_table = %s::regclass AND from_value::timestamptz = %s",
        [TABLE, low],
    )
    (made,) = cursor.fetchone()
    if made != name:
        cursor.execute(f"ALTER TABLE {made} RENAME TO {name}")
    if waiting:
        cursor.execute(f"INSERT INTO {TABLE} SELECT * FROM partition_moved")
        cursor.execute("DROP TABLE partition_moved")


def observations_partitions_create(
    *, now: datetime | None = None, months_ahead: int = MONTHS_AHEAD, since: datetime | None = None
) -> list[str]:
    """Make sure the current month and the next `months_ahead` (and, with `since`, every month from
    that one on) have their partitions; idempotent. Returns the names of those it created.

    Past months are made only when asked (`manage.py observations_partitions_create --since`): rows
    loaded into a past month without a partition wait in DEFAULT, still read by the time index.
    """
    current = month_start(now or timezone.now())
    first = month_start(since) if since is not None else current
    wanted = []
    month = first
    while month <= month_add(current, months_ahead):
        wanted.append(month)
        month = month_add(month, 1)
    created = []
    own_transaction = not connection.in_atomic_block
    with transaction.atomic(), connection.cursor() as cursor:
        if citus_mode() and own_transaction:
            # One connection per worker for the whole transaction: Citus refuses DDL (the new month's
            # shards) after a write to many shards over parallel connections (DEFAULT's rows moved). It
            # can only be set before the first parallel query, so a caller's transaction that ran one
            # (the demo's load) can make months but not move DEFAULT's rows; the beat task and the
            # command run in transactions of their own.
            cursor.execute("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [ADVISORY_LOCK])
        existing = set(partitions_existing())
        for month in wanted:
            if partition_name(month) not in existing:
                (_partition_create_citus if citus_mode() else _partition_attach)(cursor, month)
                created.append(partition_name(month))
    return created
