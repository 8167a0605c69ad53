"""Both sides of one comparison at many moments: the samples each window [since, until) held.

A calibration (program.calibration) asks how a criterion would have decided at ~26 earlier moments,
each with only the observations made before it. Reading each window apart would read the early rows
26 times over, so the exact windows share one read: every row of the series in the union of those
windows, with its time, in one query over the (definition_id, observed_at) covering index; each
window is then a slice of it, sorted once. Windows with a side over settings.ROLLUP_THRESHOLD rows
are the merged day sketches instead (metrics.rollups.read, the same rule as `sides_fetch`), all of
them in two queries. So at most three queries whatever the number of moments.

The sides are built exactly as `sides_fetch` builds them (comparison.sql: `sides_of_windows` picks
rollups or rows by the one rule, `side_of_sample` reads every statistic), so a comparison of them
judges the same.
The one difference: a side's `mean` shown in its stats is numpy's, not PostgreSQL's avg (the tests
and their intervals use numpy's on both paths)."""

from __future__ import annotations

from datetime import date, datetime

import numpy as np

from core.replica import read_connection
from metrics.models import System
from metrics.rollups.read import Window
from metrics.selectors.comparison.sql import Side, side_of_sample, sides_of_windows

# Times as whole microseconds since the epoch: exact, and cheap to compare in numpy.
ROWS_SQL = """
SELECT system_id, array_agg(value), array_agg((extract(epoch FROM observed_at) * 1000000)::bigint)
FROM metrics_observation
WHERE definition_id = %s AND system_id IN (%s, %s) {filters}
GROUP BY system_id
"""


# The day rollups' unique index (definition, system, workload, day) answers this from a few rows; the
# time index would walk every other workload's earlier entries first.
FIRST_DAY_SQL = """
SELECT min(day) FROM metrics_observationrollup
WHERE definition_id = %s AND system_id IN (%s, %s) AND (%s::bigint IS NULL OR workload_id = %s)
"""


def series_first_day(
    *, definition_id: int, workload_id: int | None, baseline: System, candidate: System
) -> date | None:
    """The first UTC day the compared series has rows on, as its rollups say (None: none yet)."""
    with read_connection().cursor() as cursor:
        cursor.execute(FIRST_DAY_SQL, [definition_id, baseline.pk, candidate.pk, workload_id, workload_id])
        (first,) = cursor.fetchone() or (None,)
    return first if isinstance(first, date) else None


def _micros(moment: datetime) -> int:
    return round(moment.timestamp() * 1_000_000)


def _sorted_side(system: System, values: np.ndarray) -> Side:
    ordered = np.sort(values)
    return side_of_sample(system, ordered, float(ordered.mean()) if len(ordered) else None)


def _union(windows: list[Window]) -> tuple[datetime | None, datetime | None]:
    """The smallest window holding them all (None: unbounded on that end)."""
    starts = [w.since for w in windows if w.since is not None]
    ends = [w.until for w in windows if w.until is not None]
    since = min(starts) if len(starts) == len(windows) else None
    until = max(ends) if len(ends) == len(windows) else None
    return since, until


def _series_rows(
    definition_id: int, workload_id: int | None, windows: list[Window], *, baseline: System, candidate: System
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """system id → (values, times in µs) of every row in the windows' union, in one query."""
    since, until = _union(windows)
    filters = ""
    params: list[int | datetime] = [definition_id, baseline.pk, candidate.pk]
    if workload_id is not None:
        filters += " AND workload_id = %s"
        params.append(workload_id)
    if since is not None:
        filters += " AND observed_at >= %s"
        params.append(since)
    if until is not None:
        filters += " AND observed_at < %s"
        params.append(until)
    rows = {}
    with read_connection().cursor() as cursor:
        cursor.execute(ROWS_SQL.format(filters=filters), params)
        for system_id, values, times in cursor.fetchall():
            rows[system_id] = (np.asarray(values, dtype=np.float64), np.asarray(times, dtype=np.int64))
    return rows


def _slice(rows: tuple[np.ndarray, np.ndarray] | None, window: Window) -> np.ndarray:
    if rows is None:
        return np.empty(0)
    values, times = rows
    keep = np.ones(len(times), dtype=bool)
    if window.since is not None:
        keep &= times >= _micros(window.since)
    if window.until is not None:
        keep &= times < _micros(window.until)
    return values[keep]


def sides_over_time(
    *,
    definition_id: int,
    workload_id: int | None,
    windows: list[tuple[datetime | None, datetime | None]],
    baseline: System,
    candidate: System,
) -> list[tuple[Side, Side]]:
    """(baseline, candidate) per (since, until) window, in their order; until is exclusive, as in
    `sides_fetch`, and None reads to the end."""
    asked = [Window(definition_id, workload_id, since, until) for since, until in windows]

    def exact_sides(positions: list[int]) -> dict[int, tuple[Side, Side]]:
        exact = [asked[i] for i in positions]
        rows = _series_rows(definition_id, workload_id, exact, baseline=baseline, candidate=candidate)
        return {
            i: (
                _sorted_side(baseline, _slice(rows.get(baseline.pk), asked[i])),
                _sorted_side(candidate, _slice(rows.get(candidate.pk), asked[i])),
            )
            for i in positions
        }

    return sides_of_windows(asked, baseline=baseline, candidate=candidate, exact_sides=exact_sides)
