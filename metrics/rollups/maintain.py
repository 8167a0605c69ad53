"""Keeping the day rollups equal to the rows: recompute whole (definition, workload, day) groups in SQL.

A recompute reads the raw rows of the days asked for and replaces their rollups in one statement
group; no row travels to Python. It is idempotent: running it twice, or for days that did not change,
writes the same rows. Ingest marks what it touched (`rollups_mark_stale`, in its transaction, from the
batch's observed_from/observed_to); the `rollups_refresh` task recomputes and clears the marks;
`rollups_rebuild` (the management command) recomputes any span directly.

Marks are upserted, so an ingest still in flight holds its mark's row lock: the refresh's
`FOR UPDATE` waits for that commit and then recomputes with its rows visible, and a mark written
after the refresh took its lock is a new row that the next refresh (queued by that ingest) reads.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any, cast

from django.db import connection, transaction

from metrics.rollups.sketch import LOG_GAMMA
from metrics.signals import rollups_refreshed

# One statement: bucket the rows (sign, ⌈ln|v| / ln γ⌉), then fold the buckets into one rollup row per
# series and day. m2 combines the buckets' own squared deviations with their means' spread (Chan). The
# day's exact median rides along for the charts, which then need no sketch at all.
RECOMPUTE_SQL = """
WITH buckets AS (
    SELECT definition_id, system_id, workload_id, (observed_at AT TIME ZONE 'UTC')::date AS day,
           sign(value)::int AS sign,
           CASE WHEN value = 0 THEN 0 ELSE ceil(ln(abs(value)) / %(log_gamma)s)::int END AS key,
           count(*) AS c, sum(value) AS s, sum(value * value) AS ss,
           coalesce(var_pop(value), 0) * count(*) AS m2, min(value) AS lo, max(value) AS hi
    FROM metrics_observation
    WHERE definition_id = %(definition)s AND observed_at >= %(start)s AND observed_at < %(end)s {workloads}
    GROUP BY 1, 2, 3, 4, 5, 6
), centred AS (
    SELECT *, sum(s) OVER series / sum(c) OVER series AS mean
    FROM buckets WINDOW series AS (PARTITION BY definition_id, system_id, workload_id, day)
), medians AS (
    SELECT definition_id, system_id, workload_id, (observed_at AT TIME ZONE 'UTC')::date AS day,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS median
    FROM metrics_observation
    WHERE definition_id = %(definition)s AND observed_at >= %(start)s AND observed_at < %(end)s {workloads}
    GROUP BY 1, 2, 3, 4
)
INSERT INTO metrics_observationrollup
    (definition_id, system_id, workload_id, day, n, total, m2, sumsq, min, max, zeros, bins,
     negative_bins, median, refreshed_at)
SELECT c.definition_id, c.system_id, c.workload_id, c.day, sum(c.c), sum(c.s),
       sum(c.m2 + c.c * (c.s / c.c - c.mean) * (c.s / c.c - c.mean)), sum(c.ss), min(c.lo), max(c.hi),
       coalesce(sum(c.c) FILTER (WHERE c.sign = 0), 0),
       coalesce(jsonb_object_agg(c.key, c.c) FILTER (WHERE c.sign = 1), '{{}}'::jsonb),
       coalesce(jsonb_object_agg(c.key, c.c) FILTER (WHERE c.sign = -1), '{{}}'::jsonb),
       min(m.median), clock_timestamp()
FROM centred c
JOIN medians m USING (definition_id, system_id, workload_id, day)
GROUP BY c.definition_id, c.system_id, c.workload_id, c.day
"""
DELETE_SQL = """
DELETE FROM metrics_observationrollup
WHERE definition_id = %(definition)s AND day >= %(first)s AND day < %(end_day)s {workloads}
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
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext('metrics.rollups'), %s::int)", [definition_id])
        cursor.execute(DELETE_SQL.format(workloads=workloads), params)
        cursor.execute(RECOMPUTE_SQL.format(workloads=workloads), params)
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
    """Recompute the marked days (oldest marks first, at most `limit`) and clear their marks, in one
    transaction per definition; how many marks were cleared."""
    cleared = 0
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT id, definition_id, workload_id, day FROM metrics_rollupstale
            ORDER BY definition_id, workload_id, day LIMIT %s FOR UPDATE
            """,
            [limit],
        )
        marks = cursor.fetchall()
        groups: dict[tuple[int, date], set[int]] = {}
        for _, definition_id, workload_id, day in marks:
            groups.setdefault((definition_id, day), set()).add(workload_id)
        for (definition_id, day), workload_ids in sorted(groups.items()):
            rollups_recompute(
                definition_id=definition_id, first=day, last=day, workload_ids=sorted(workload_ids)
            )
        if marks:
            cursor.execute("DELETE FROM metrics_rollupstale WHERE id = ANY(%s)", [[m[0] for m in marks]])
            cleared = len(marks)
            rollups_refreshed.send(sender=None, definition_ids=sorted({d for d, _ in groups}))
    return cleared


def rollups_rebuild(*, definition_ids: list[int] | None = None, since: date | None = None) -> int:
    """Recompute every rollup of these definitions (default: all) from `since` (or their first day):
    the catch-up after a bulk load or a lost task, one transaction (readers see the old rollups until
    it commits). Days left without rows lose their rollups. How many rollup rows were written."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            """
            DELETE FROM metrics_observationrollup
            WHERE (%(ids)s::bigint[] IS NULL OR definition_id = ANY(%(ids)s::bigint[]))
              AND (%(since)s::date IS NULL OR day >= %(since)s::date)
            """,
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
