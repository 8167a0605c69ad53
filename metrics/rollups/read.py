"""Comparison sides from the day rollups: counts first, then (for large windows) merged sketches.

A window is approximated by the whole UTC days inside it: from the first midnight at or after `since`
to the last midnight at or before `until` (no `until`: through today, whose rollup holds every row so
far). So an approximate answer never reads rows outside the asked window, and states the window it
read (`effective_window`). Partial edge days are left out rather than read from the rows: reading
them would scan the series' index again, which is what the rollups avoid.

Two queries whatever the number of windows: the moments of every window's days (which also decide,
per window, whether it is over settings.ROLLUP_THRESHOLD), and the merged buckets of those that are.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.conf import settings

from core.replica import read_connection
from metrics.rollups.sketch import Sketch

WANTED = "(%s::integer, %s::bigint, %s::bigint, %s::date, %s::date)"
MATCH = """
JOIN metrics_observationrollup r
  ON r.definition_id = wanted.definition_id AND r.system_id IN (%s, %s)
 AND (wanted.workload_id IS NULL OR r.workload_id = wanted.workload_id)
 AND (wanted.first_day IS NULL OR r.day >= wanted.first_day)
 AND (wanted.end_day IS NULL OR r.day < wanted.end_day)
"""
# Also says, per window, whether its definition has OTLP histogram points (has_histograms), so the
# readers learn it without a query of their own: the LEFT JOIN keeps a window without rollups.
MOMENTS_SQL = (
    "WITH wanted (idx, definition_id, workload_id, first_day, end_day) AS (VALUES {rows}) "
    "SELECT wanted.idx, r.system_id, r.n, r.total, r.m2, r.min, r.max, r.zeros, d.has_histograms "
    "FROM wanted JOIN metrics_metricdefinition d ON d.id = wanted.definition_id LEFT" + MATCH
)
BINS_SQL = (
    "WITH wanted (idx, definition_id, workload_id, first_day, end_day) AS (VALUES {rows}) "
    "SELECT wanted.idx, r.system_id, b.sign, b.key::int, sum(b.count::bigint) FROM wanted"
    + MATCH
    + """
CROSS JOIN LATERAL (
    SELECT 1, key, value FROM jsonb_each_text(r.bins)
    UNION ALL SELECT -1, key, value FROM jsonb_each_text(r.negative_bins)
) AS b (sign, key, count)
GROUP BY 1, 2, 3, 4
"""
)


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


def effective_window(
    since: datetime | None, until: datetime | None
) -> tuple[datetime | None, datetime | None]:
    """The window an approximate answer read, as instants (midnights UTC)."""
    first, end = whole_days(since, until)

    def midnight(day: date | None) -> datetime | None:
        return datetime.combine(day, time.min, tzinfo=UTC) if day else None

    return midnight(first), midnight(end)


def _rows(windows: list[Window]) -> tuple[str, list[Any]]:
    params: list[Any] = []
    for index, window in enumerate(windows):
        params += [index, window.definition_id, window.workload_id, *whole_days(window.since, window.until)]
    return ", ".join([WANTED] * len(windows)), params


def rollups_answer(rows: int, threshold: int | None = None) -> bool:
    """The one rule of exact versus rollup: a side counting more than the threshold rows is read from
    its day rollups, anything smaller from the rows themselves."""
    return rows > (settings.ROLLUP_THRESHOLD if threshold is None else threshold)


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
    rows, params = _rows(windows)
    sketches: dict[tuple[int, int], Sketch] = {}
    histograms: set[int] = set()
    with read_connection().cursor() as cursor:
        cursor.execute(MOMENTS_SQL.format(rows=rows), [*params, baseline_id, candidate_id])
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
        if i not in histograms and rollups_answer(len(sketch), threshold)
    }
    if not large:
        return Thresholds({}, histograms)
    chosen = [windows[i] for i in sorted(large)]
    position = dict(enumerate(sorted(large)))  # index in `chosen` → index in `windows`
    rows, params = _rows(chosen)
    with read_connection().cursor() as cursor:
        cursor.execute(BINS_SQL.format(rows=rows), [*params, baseline_id, candidate_id])
        for index, system_id, sign, key, count in cursor.fetchall():
            sketch = sketches[(position[index], system_id)]
            (sketch.positive if sign == 1 else sketch.negative)[key] = count
    chosen_sketches = {
        i: (sketches.get((i, baseline_id), Sketch()), sketches.get((i, candidate_id), Sketch()))
        for i in sorted(large)
    }
    return Thresholds(chosen_sketches, histograms)


SUMMARY_SQL = (
    "WITH wanted (idx, definition_id, workload_id, first_day, end_day) AS (VALUES {rows}) "
    "SELECT wanted.idx, r.system_id, sum(r.n), sum(r.total), max(r.refreshed_at) FROM wanted"
    + MATCH
    + " GROUP BY 1, 2 ORDER BY 1, 2"
)


def rollup_summaries(
    windows: list[Window], *, baseline_id: int, candidate_id: int
) -> list[dict[int, tuple[int, float, datetime]]]:
    """Per window, {system id: (rows, their sum, the last refresh)} of its whole days, one query: what
    a rollup answer depends on, read without touching the rows (a gate's inputs fingerprint)."""
    summaries: list[dict[int, tuple[int, float, datetime]]] = [{} for _ in windows]
    if not windows:
        return summaries
    rows, params = _rows(windows)
    with read_connection().cursor() as cursor:
        cursor.execute(SUMMARY_SQL.format(rows=rows), [*params, baseline_id, candidate_id])
        for index, system_id, n, total, refreshed in cursor.fetchall():
            summaries[index][system_id] = (int(n), total, refreshed)
    return summaries
