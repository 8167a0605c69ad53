"""What PostgreSQL itself counted in this transaction on the observation partitions
(`pg_stat_xact_user_tables`): it sees statements that go past Django's cursor (COPY, raw cursors)
and counts rows a plan read, whatever EXPLAIN would have said."""

from __future__ import annotations

from django.db import connection

PARTITIONS = "SELECT inhrelid FROM pg_inherits WHERE inhparent = 'metrics_observation'::regclass"


def _total(expression: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT coalesce(sum({expression}), 0) FROM pg_stat_xact_user_tables WHERE relid IN ({PARTITIONS})"
        )
        return int(cursor.fetchone()[0])


def observation_scans() -> int:
    """Sequential and index scans started on the partitions."""
    return _total("seq_scan + coalesce(idx_scan, 0)")


def observation_rows_read() -> int:
    """Rows read from the partitions' heaps, by sequential scans and by index scans."""
    return _total("seq_tup_read + coalesce(idx_tup_fetch, 0)")
