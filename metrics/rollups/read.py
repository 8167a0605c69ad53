"""Comparison sides from the day rollups: counts first, then (for large windows) merged sketches.

A window's whole UTC days come from their rollups; the partial days at either end (from `since` to
the first midnight after it, from the last midnight before `until` to `until`) are read from the
rows, bucketed with the same LOG_GAMMA and merged into the sketch with their exact moments. So a
window's n is exactly the rows in it, and only the edges' rows are read (no `until`: through today,
whose rollup holds every row so far). A window without a whole day in it is never read from rollups.

Two queries whatever the number of windows: the moments of every window's whole days (which also
decide, per window, whether it is over settings.ROLLUP_THRESHOLD), and, for those that are, the
merged buckets of their days with the bucketed rows of their edges (one UNION ALL).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, cast

from django.conf import settings

from core.replica import read_connection
from metrics.retention import reaches_before_horizon
from metrics.rollups.sketch import LOG_GAMMA, Sketch
from metrics.rollups.summary import bucket_key_sql

# Every query here is a UNION ALL of one part per window, each naming its definition: on Citus
# (core.citus) each part is then a single-shard query, where a join of the windows' VALUES with the
# distributed rollups was refused or read every shard; on PostgreSQL the same index reads.
DAYS = """
  r.definition_id = %s AND r.system_id IN (%s, %s)
  AND (%s::bigint IS NULL OR r.workload_id = %s::bigint)
  AND (%s::date IS NULL OR r.day >= %s::date) AND (%s::date IS NULL OR r.day < %s::date)
"""
# Per window, whether its definition has OTLP histogram points (system NULL; the readers learn it
# without a query of their own), then the moments of its whole days' rollups.
HISTOGRAMS_PART = (
    "SELECT w.idx, NULL::bigint, NULL::bigint, NULL::float8, NULL::float8, NULL::float8, NULL::float8,"
    " NULL::bigint, d.has_histograms FROM (VALUES {rows}) AS w (idx, definition_id)"
    " JOIN metrics_metricdefinition d ON d.id = w.definition_id"
)
MOMENTS_PART = (
    "SELECT %s::integer, r.system_id, r.n, r.total, r.m2, r.min, r.max, r.zeros, NULL::boolean"
    " FROM metrics_observationrollup r WHERE" + DAYS
)
# The rollups' bucket counts of a window's days per system (moment columns NULL), and the buckets of
# an edge's rows with their own moments, keyed by the rollups' own rule (bucket_key_sql).
BINS_PART = (
    "SELECT %s::integer, r.system_id, b.sign, b.key::int, sum(b.count::bigint), NULL::float8,"
    " NULL::float8, NULL::float8, NULL::float8 FROM metrics_observationrollup r"
    """
CROSS JOIN LATERAL (
    SELECT 1, key, value FROM jsonb_each_text(r.bins)
    UNION ALL SELECT -1, key, value FROM jsonb_each_text(r.negative_bins)
) AS b (sign, key, count)
WHERE""" + DAYS + "GROUP BY 1, 2, 3, 4"
)
EDGE_PART = (
    "SELECT %s::integer, o.system_id, sign(o.value)::int, "
    + bucket_key_sql("o.value", "%s")
    + """, count(*), sum(o.value), coalesce(var_pop(o.value), 0) * count(*), min(o.value), max(o.value)
FROM metrics_observation o
WHERE o.definition_id = %s AND o.system_id IN (%s, %s) AND (%s::bigint IS NULL OR o.workload_id = %s::bigint)
  AND o.observed_at >= %s AND o.observed_at < %s
GROUP BY 1, 2, 3, 4"""
)
SUMMARY_PART = (
    "SELECT %s::integer, r.system_id, sum(r.n), sum(r.total), max(r.refreshed_at)"
    " FROM metrics_observationrollup r WHERE" + DAYS + "GROUP BY 1, 2"
)


def _union(parts: list[str]) -> str:
    return " UNION ALL ".join(f"({part})" for part in parts)


@dataclass(frozen=True)
class Window:
    definition_id: int
    workload_id: int | None = None
    since: datetime | None = None
    until: datetime | None = None


def whole_days(since: datetime | None, until: datetime | None) -> tuple[date | None, date | None]:
    """The first day and the day after the last of the whole UTC days inside [since, until)."""
    first = end = None
    if since is not None:
        since = since.astimezone(UTC)
        first = since.date() if since.time() == time.min else since.date() + timedelta(days=1)
    if until is not None:
        end = until.astimezone(UTC).date()
    return first, end


def _midnight(day: date | None) -> datetime | None:
    return datetime.combine(day, time.min, tzinfo=UTC) if day else None


def edges(window: Window) -> tuple[tuple[datetime, datetime] | None, tuple[datetime, datetime] | None]:
    """The partial days at the window's two ends, [since, first midnight) and [last midnight, until):
    read from the rows, not the rollups (None where the window starts or ends at a midnight or is open)."""
    first, end = whole_days(window.since, window.until)
    head = tail = None
    if (
        window.since is not None
        and first is not None
        and (since := window.since.astimezone(UTC)).time() != time.min
    ):
        head = (since, cast(datetime, _midnight(first)))
    if (
        window.until is not None
        and end is not None
        and (until := window.until.astimezone(UTC)).time() != time.min
    ):
        tail = (cast(datetime, _midnight(end)), until)
    return head, tail


def _days_params(window: Window, baseline_id: int, candidate_id: int) -> list[Any]:
    first, end = whole_days(window.since, window.until)
    workload = window.workload_id
    return [window.definition_id, baseline_id, candidate_id, workload, workload, first, first, end, end]


def _moments_query(windows: list[Window], baseline_id: int, candidate_id: int) -> tuple[str, list[Any]]:
    parts = [HISTOGRAMS_PART.format(rows=", ".join(["(%s::integer, %s::bigint)"] * len(windows)))]
    params: list[Any] = [
        value for index, window in enumerate(windows) for value in (index, window.definition_id)
    ]
    for index, window in enumerate(windows):
        parts.append(MOMENTS_PART)
        params += [index, *_days_params(window, baseline_id, candidate_id)]
    return _union(parts), params


def _bins_query(windows: list[Window], baseline_id: int, candidate_id: int) -> tuple[str, list[Any]]:
    parts: list[str] = []
    params: list[Any] = []
    for index, window in enumerate(windows):
        parts.append(BINS_PART)
        params += [index, *_days_params(window, baseline_id, candidate_id)]
        for edge in edges(window):
            if edge is not None:
                parts.append(EDGE_PART)
                params += [index, LOG_GAMMA, window.definition_id, baseline_id, candidate_id]
                params += [window.workload_id, window.workload_id, *edge]
    return _union(parts), params


def rollups_answer(rows: int, threshold: int | None = None) -> bool:
    """The one rule of exact versus rollup: a side counting more than the threshold rows is read from
    its day rollups, anything smaller from the rows themselves."""
    return rows > (settings.ROLLUP_THRESHOLD if threshold is None else threshold)


def window_reads_rollups(
    side_rows: Iterable[int],
    *,
    since: datetime | None,
    has_histograms: bool,
    threshold: int | None = None,
) -> bool:
    """The one rule of a window's rows versus its day rollups, for the comparison
    (`sketches_over_threshold`) and the chart of a window no comparison was computed for
    (metrics.selectors.comparison_series `window_series`). `side_rows`: the rows counted in the
    rollups of each side that has any. Never for a definition with OTLP histogram points (the rollups
    hold no buckets); else when a side with rollups counts more than the threshold (`rollups_answer`),
    or the window reaches before the retention horizon, whose rows may be gone (metrics.retention). A
    window without rollups reads its rows, wherever it is: there is nothing else to read."""
    if has_histograms:
        return False
    return any(rollups_answer(n, threshold) or reaches_before_horizon(since) for n in side_rows)


@dataclass(frozen=True)
class Thresholds:
    """What the rollups decide about a list of windows (`sketches_over_threshold`)."""

    # window index → (baseline, candidate) sketches, where a side counts more than the threshold rows
    sketches: dict[int, tuple[Sketch, Sketch]]
    # the windows whose definition has OTLP histogram points: read from the rows and the points,
    # never from the rollups, which hold no buckets
    histograms: set[int]


def sketches_over_threshold(
    windows: list[Window], *, baseline_id: int, candidate_id: int, threshold: int | None = None
) -> Thresholds:
    """The sketches of the windows where a side's rollups count more than the threshold rows (the
    others are left to the exact read), and which windows have histogram points."""
    if not windows:
        return Thresholds({}, set())
    sketches: dict[tuple[int, int], Sketch] = {}
    histograms: set[int] = set()
    with read_connection().cursor() as cursor:
        cursor.execute(*_moments_query(windows, baseline_id, candidate_id))
        for index, system_id, n, total, m2, low, high, zeros, has_histograms in cursor.fetchall():
            if has_histograms:
                histograms.add(index)
            if system_id is None:  # a window without rollups
                continue
            sketch = sketches.setdefault((index, system_id), Sketch())
            sketch.moments.add(n, total, m2, low, high)
            sketch.zeros += zeros
    large = {
        i
        for (i, _), sketch in sketches.items()
        if window_reads_rollups(
            [len(sketch)], since=windows[i].since, has_histograms=i in histograms, threshold=threshold
        )
    }
    if not large:
        return Thresholds({}, histograms)
    chosen = [windows[i] for i in sorted(large)]
    position = dict(enumerate(sorted(large)))  # index in `chosen` → index in `windows`
    with read_connection().cursor() as cursor:
        cursor.execute(*_bins_query(chosen, baseline_id, candidate_id))
        for index, system_id, sign, key, count, total, m2, low, high in cursor.fetchall():
            sketch = sketches.setdefault((position[index], system_id), Sketch())
            sketch.add_bucket(sign, key, int(count))
            if total is not None:  # an edge's rows: their exact moments join the days'
                sketch.moments.add(int(count), total, m2, low, high)
    chosen_sketches = {
        i: (sketches.get((i, baseline_id), Sketch()), sketches.get((i, candidate_id), Sketch()))
        for i in sorted(large)
    }
    return Thresholds(chosen_sketches, histograms)


def rollup_summaries(
    windows: list[Window], *, baseline_id: int, candidate_id: int
) -> list[dict[int, tuple[int, float, datetime]]]:
    """Per window, {system id: (rows, their sum, the last refresh)} of its whole days, one query: what
    a rollup answer depends on, read without touching the rows (a gate's inputs fingerprint)."""
    summaries: list[dict[int, tuple[int, float, datetime]]] = [{} for _ in windows]
    if not windows:
        return summaries
    parts, params = [SUMMARY_PART] * len(windows), []
    for index, window in enumerate(windows):
        params += [index, *_days_params(window, baseline_id, candidate_id)]
    with read_connection().cursor() as cursor:
        cursor.execute(_union(parts) + " ORDER BY 1, 2", params)
        for index, system_id, n, total, refreshed in cursor.fetchall():
            summaries[index][system_id] = (int(n), total, refreshed)
    return summaries
