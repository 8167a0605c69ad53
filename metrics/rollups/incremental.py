"""Incremental rollups: a batch adds its own contribution to each series-day it touched.

Ingest computes a delta per (definition, system, workload, UTC day) from the rows it inserted, in SQL
(metrics.rollups.summary, the recompute's own rule), and writes it to `metrics_rollupdelta` in the
batch's transaction: an insert of a few rows that locks nothing, so concurrent batches into one day never
wait for each other. The `rollups_refresh` task folds the deltas into the rollups (`rollups_fold`): it
reads the deltas and the rollup rows they add to, never the observations, so its cost follows the batch,
not the day. Folding nulls the day's exact median; the charts then read it from the day's buckets (within
the sketch's accuracy) until the nightly `rollups_medians_recompute` puts the exact one back for days that
are over (metrics.rollups.maintain).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import psycopg
from django.db import connection, transaction

from metrics.rollups.maintain import definition_lock
from metrics.rollups.sketch import LOG_GAMMA
from metrics.rollups.summary import SERIES_DAY, SUMMARY_COLUMNS, combined_ctes, summary_ctes
from metrics.signals import rollups_refreshed


def deltas_ctes(rows: str) -> str:
    """CTEs that write the deltas of `rows` (a FROM item with definition_id, system_id, workload_id,
    observed_at and value: the rows a batch inserted) for batch %(batch)s; also takes %(log_gamma)s."""
    return f"""{summary_ctes(rows)}, deltas_written AS (
    INSERT INTO metrics_rollupdelta ({SERIES_DAY}, {SUMMARY_COLUMNS}, batch_id)
    SELECT *, %(batch)s FROM summary
)"""


# The rows of a direct COPY go to the server once more, by binary COPY into a temporary table: a third
# of the client CPU of sending them as five array parameters (5 against 24 ms per 10,000 rows), whose
# dumping psycopg does in Python, element by element.
DELTA_ROWS_TABLE = """
CREATE TEMP TABLE rollup_delta_rows (
    definition_id bigint, system_id bigint, workload_id bigint, observed_at timestamptz, value float8
) ON COMMIT DROP
"""
DELTAS_FROM_ROWS = "WITH " + deltas_ctes("rollup_delta_rows") + " SELECT 1"


def rollup_deltas_add(
    cursor: psycopg.Cursor[Any], *, batch_id: int, rows: Iterable[tuple[int, int, int, datetime, float]]
) -> None:
    """In the ingest's transaction: the deltas of rows that were all inserted (a direct COPY), each
    (definition_id, system_id, workload_id, observed_at, value)."""
    cursor.execute(DELTA_ROWS_TABLE)
    with cursor.copy("COPY rollup_delta_rows FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(["int8", "int8", "int8", "timestamptz", "float8"])
        for row in rows:
            copy.write_row(row)
    cursor.execute(DELTAS_FROM_ROWS, {"batch": batch_id, "log_gamma": LOG_GAMMA})
    cursor.execute("DROP TABLE rollup_delta_rows")


# One statement: take the definition's deltas, add the rollup rows they add to as one more part each,
# and write the sums back. The median no longer describes the day: it goes (see the module's docstring).
FOLD_SQL = f"""
WITH taken AS (
    DELETE FROM metrics_rollupdelta WHERE definition_id = %(definition)s
    RETURNING {SERIES_DAY}, {SUMMARY_COLUMNS}
), parts AS (
    SELECT * FROM taken
    UNION ALL
    SELECT {SERIES_DAY}, {SUMMARY_COLUMNS} FROM metrics_observationrollup
    WHERE definition_id = %(definition)s
      AND (system_id, workload_id, day) IN (SELECT system_id, workload_id, day FROM taken)
), {combined_ctes("parts")}
INSERT INTO metrics_observationrollup ({SERIES_DAY}, {SUMMARY_COLUMNS}, median, refreshed_at)
SELECT *, NULL, clock_timestamp() FROM combined
ORDER BY {SERIES_DAY}
ON CONFLICT (definition_id, system_id, workload_id, day) DO UPDATE SET
    n = excluded.n, total = excluded.total, m2 = excluded.m2, sumsq = excluded.sumsq, min = excluded.min,
    max = excluded.max, zeros = excluded.zeros, bins = excluded.bins, negative_bins = excluded.negative_bins,
    median = NULL, refreshed_at = excluded.refreshed_at
"""


def rollups_fold() -> int:
    """Fold every committed delta into its rollup, one transaction per definition under its lock; how
    many rollup rows were written. Announces the definitions whose rollups changed."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT definition_id FROM metrics_rollupdelta ORDER BY 1")
        definition_ids = [row[0] for row in cursor.fetchall()]
    written = 0
    for definition_id in definition_ids:
        with transaction.atomic(), connection.cursor() as cursor:
            definition_lock(cursor, definition_id)
            cursor.execute(FOLD_SQL, {"definition": definition_id})
            if cursor.rowcount:
                written += cursor.rowcount
                rollups_refreshed.send(sender=None, definition_ids=[definition_id])
    return written


def rollups_pending() -> int:
    """How much ingest and corrections left for the refresh: deltas not folded plus days marked stale.
    Zero means every committed batch and correction is in the rollups."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT count(*) FROM metrics_rollupdelta) + (SELECT count(*) FROM metrics_rollupstale)"
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def rollups_wait_fresh(*, timeout: float = 60.0, poll: float = 0.05) -> bool:
    """Wait (polling) until the worker has folded every delta and recomputed every stale day: whether
    that happened within `timeout` seconds. For callers that must count the follow-up work of a batch
    (benchmarks) or read rollups that include it."""
    deadline = time.monotonic() + timeout
    while rollups_pending():
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll)
    return True
