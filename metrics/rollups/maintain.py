"""Keeping the day rollups equal to the rows: batches add their deltas; corrections recompute whole days.

- Ingest writes each batch's contribution to every series-day it touched (`RollupDelta`, computed in SQL
  from the rows it inserted, metrics.rollups.incremental) in its own transaction; the `rollups_refresh`
  task folds the deltas into the rollups. Its cost follows the batch, never the day it lands in.
- Anything that removes or changes rows (a withdrawn run, a correction) marks the days it touched
  (`rollups_mark_stale`, in its transaction); the refresh recomputes those days from the rows, first.
- `rollups_rebuild` (the management command) recomputes any span directly.

A recompute reads the raw rows of the days asked for and replaces their rollups in one statement group;
no row travels to Python. It is idempotent: running it twice, or for days that did not change, writes the
same rows. The statement that reads the rows also drops the deltas of those days, in the same snapshot: a
batch's rows and its deltas commit together, so every batch is either in the rows it reads (and its
deltas go) or in neither (and its deltas stay, to be folded later). Every writer of rollups (recompute,
fold, the median backfill) holds the definition's advisory lock; ingest never writes a rollup row, so
it waits for none of them.

Marks are upserted, so a correction still in flight holds its mark's row lock: the refresh's `FOR UPDATE`
waits for that commit and then recomputes with its changes visible, and a mark written after the
refresh took its lock is a new row that the next refresh (queued with it) reads.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any, cast

from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper

from metrics.rollups.sketch import LOG_GAMMA
from metrics.rollups.summary import SERIES_DAY, SUMMARY_COLUMNS, summary_ctes
from metrics.signals import rollups_refreshed


def definition_lock(cursor: CursorWrapper, definition_id: int) -> None:
    """Until commit, this transaction alone writes the rollups of this definition."""
    cursor.execute("SELECT pg_advisory_xact_lock(hashtext('metrics.rollups'), %s::int)", [definition_id])


def _recompute_sql(workloads: str) -> str:
    """The day's summary from its rows, the exact median beside it for the charts; the days' deltas
    dropped in the same snapshot (see the module's docstring)."""
    window = (
        "definition_id = %(definition)s AND observed_at >= %(start)s AND observed_at < %(end)s" + workloads
    )
    rows = f"(SELECT definition_id, system_id, workload_id, observed_at, value FROM metrics_observation WHERE {window}) AS rows"
    return f"""
WITH {summary_ctes(rows)}, medians AS (
    SELECT definition_id, system_id, workload_id, (observed_at AT TIME ZONE 'UTC')::date AS day,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS median
    FROM metrics_observation
    WHERE {window}
    GROUP BY 1, 2, 3, 4
), counted AS (
    DELETE FROM metrics_rollupdelta
    WHERE definition_id = %(definition)s AND day >= %(first)s AND day < %(end_day)s{workloads}
)
INSERT INTO metrics_observationrollup ({SERIES_DAY}, {SUMMARY_COLUMNS}, median, refreshed_at)
SELECT s.*, m.median, clock_timestamp()
FROM summary s JOIN medians m USING ({SERIES_DAY})
WHERE {KEPT.format(day="s.day")}
"""


# The days of a month whose rows retention dropped (metrics.retention): their rollups are all that is
# left of them, so no recompute from the rows deletes, replaces or re-medians them.
KEPT = (
    "NOT EXISTS (SELECT 1 FROM metrics_observationmonthdropped dropped"
    " WHERE dropped.month = date_trunc('month', {day})::date)"
)

DELETE_SQL = f"""
DELETE FROM metrics_observationrollup
WHERE definition_id = %(definition)s AND day >= %(first)s AND day < %(end_day)s {{workloads}}
  AND {KEPT.format(day="day")}
"""


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def utc_day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


def rollups_recompute(
    *, definition_id: int, first: date, last: date, workload_ids: list[int] | None = None
) -> int:
    """Replace the rollups of days first..last (inclusive) of one definition (its listed workloads, or
    all) by a recompute from the rows; how many rollup rows now stand for them. Serialised per
    definition by an advisory lock, so two recomputes never interleave their delete and insert."""
    workloads = " AND workload_id = ANY(%(workloads)s)" if workload_ids is not None else ""
    params: dict[str, Any] = {
        "definition": definition_id,
        "first": first,
        "end_day": last + timedelta(days=1),
        "start": _midnight(first),
        "end": _midnight(last + timedelta(days=1)),
        "workloads": list(workload_ids or []),
        "log_gamma": LOG_GAMMA,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        definition_lock(cursor, definition_id)
        cursor.execute(DELETE_SQL.format(workloads=workloads), params)
        cursor.execute(_recompute_sql(workloads), params)
        return cast(int, cursor.rowcount)  # CursorWrapper passes attributes through untyped


def rollups_mark_stale(
    *, definition_ids: list[int], workload_ids: list[int], start: datetime, end: datetime
) -> None:
    """In the ingest's transaction: every (definition, workload, day) from start's day to end's day."""
    first, last = utc_day(start), utc_day(end)
    if not definition_ids or not workload_ids or last < first:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO metrics_rollupstale (definition_id, workload_id, day, marked_at)
            SELECT d, w, day::date, now()
            FROM unnest(%s::bigint[]) AS d, unnest(%s::bigint[]) AS w,
                 generate_series(%s::date, %s::date, interval '1 day') AS day
            ORDER BY 1, 2, 3
            ON CONFLICT (definition_id, workload_id, day) DO UPDATE SET marked_at = excluded.marked_at
            """,
            [sorted(definition_ids), sorted(workload_ids), first, last],
        )


def rollups_refresh_stale(*, limit: int = 500) -> int:
    """Recompute the marked days (at most `limit`, by definition) and clear their marks, in one
    transaction per definition; how many marks were cleared.

    Marks are locked one definition at a time: on Citus that is one shard's rows, and a lock across
    shards (FOR UPDATE over the whole table) is refused."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT definition_id FROM metrics_rollupstale ORDER BY definition_id")
        definition_ids = [definition_id for (definition_id,) in cursor.fetchall()]
    cleared, refreshed = 0, []
    for definition_id in definition_ids:
        if cleared >= limit:
            break
        if count := _refresh_definition_stale(definition_id, limit=limit - cleared):
            cleared += count
            refreshed.append(definition_id)
    if refreshed:
        rollups_refreshed.send(sender=None, definition_ids=refreshed)
    return cleared


def _refresh_definition_stale(definition_id: int, *, limit: int) -> int:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT id, workload_id, day FROM metrics_rollupstale WHERE definition_id = %s
            ORDER BY workload_id, day LIMIT %s FOR UPDATE
            """,
            [definition_id, limit],
        )
        marks = cursor.fetchall()  # none if another refresh cleared them while this one waited
        days: dict[date, set[int]] = {}
        for _, workload_id, day in marks:
            days.setdefault(day, set()).add(workload_id)
        for day, workload_ids in sorted(days.items()):
            rollups_recompute(
                definition_id=definition_id, first=day, last=day, workload_ids=sorted(workload_ids)
            )
        cursor.execute(
            "DELETE FROM metrics_rollupstale WHERE definition_id = %s AND id = ANY(%s)",
            [definition_id, [mark_id for mark_id, _, _ in marks]],
        )
        return len(marks)


def rollups_rebuild(*, definition_ids: list[int] | None = None, since: date | None = None) -> int:
    """Recompute every rollup of these definitions (default: all) from `since` (or their first day):
    the catch-up after a bulk load or a lost task, one transaction (readers see the old rollups until
    it commits). Days left without rows lose their rollups. How many rollup rows were written."""
    with transaction.atomic(), connection.cursor() as cursor:
        # Every definition's lock before its rollups are deleted, in one order: a fold waiting on a
        # deleted row while this waits on the fold's lock would be a deadlock.
        cursor.execute(
            """
            SELECT pg_advisory_xact_lock(hashtext('metrics.rollups'), id::int)
            FROM (SELECT id FROM metrics_metricdefinition
                  WHERE %(ids)s::bigint[] IS NULL OR id = ANY(%(ids)s::bigint[]) ORDER BY id) AS definitions
            """,
            {"ids": definition_ids},
        )
        cursor.execute(
            """
            DELETE FROM metrics_observationrollup
            WHERE (%(ids)s::bigint[] IS NULL OR definition_id = ANY(%(ids)s::bigint[]))
              AND (%(since)s::date IS NULL OR day >= %(since)s::date)
              AND """
            + KEPT.format(day="day"),
            {"ids": definition_ids, "since": since},
        )
        cursor.execute(
            """
            SELECT definition_id, min(observed_at), max(observed_at) FROM metrics_observation
            WHERE (%(ids)s::bigint[] IS NULL OR definition_id = ANY(%(ids)s::bigint[]))
              AND (%(since)s::timestamptz IS NULL OR observed_at >= %(since)s::timestamptz)
            GROUP BY definition_id ORDER BY definition_id
            """,
            {"ids": definition_ids, "since": _midnight(since) if since else None},
        )
        spans = cursor.fetchall()
        written = 0
        for definition_id, start, end in spans:
            written += rollups_recompute(definition_id=definition_id, first=utc_day(start), last=utc_day(end))
        return written


MEDIANS_SQL = """
UPDATE metrics_observationrollup r SET median = m.median
FROM (
    SELECT system_id, workload_id, percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS median
    FROM metrics_observation
    WHERE definition_id = %(definition)s AND observed_at >= %(start)s AND observed_at < %(end)s
    GROUP BY 1, 2
) AS m
WHERE r.definition_id = %(definition)s AND r.day = %(day)s AND r.median IS NULL
  AND (r.system_id, r.workload_id) = (m.system_id, m.workload_id)
"""


def rollups_medians_recompute(*, before: date, limit: int = 200) -> int:
    """The exact median of days before `before` whose rollup has none (a fold nulled it, or the row is
    older than medians): one read of each such day's rows, once it is over, at most `limit` (definition,
    day) pairs; how many rollup rows got theirs. Nightly on beat: until then a chart reads the day's
    median from its buckets. A batch that lands in the day later nulls it again when folded."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT DISTINCT definition_id, day FROM metrics_observationrollup
            WHERE median IS NULL AND day < %s AND """
            + KEPT.format(day="day")
            + """
            ORDER BY 1, 2 LIMIT %s
            """,
            [before, limit],
        )
        days = cursor.fetchall()
    updated = 0
    for definition_id, day in days:
        with transaction.atomic(), connection.cursor() as cursor:
            definition_lock(cursor, definition_id)
            params = {
                "definition": definition_id,
                "day": day,
                "start": _midnight(day),
                "end": _midnight(day + timedelta(days=1)),
            }
            cursor.execute(MEDIANS_SQL, params)
            updated += cursor.rowcount
    return updated
