"""The OTLP histogram points of comparison windows, merged into the sides read from the rows.

Only windows of definitions that have histogram points (Window.histograms) are asked, in one query
for all of them; a side then becomes `Buckets`: its exact values and every point's buckets, so n is
the rows plus the points' counts, the mean exact, the quantiles bracketed (metrics.rollups.buckets).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from core.replica import read_connection
from metrics.rollups.buckets import Buckets
from metrics.rollups.read import Window

WANTED = "(%s::integer, %s::bigint, %s::bigint, %s::timestamptz, %s::timestamptz)"
HISTOGRAMS_SQL = """
WITH wanted (idx, definition_id, workload_id, since, until) AS (VALUES {rows})
SELECT wanted.idx, h.system_id, h.sum, h.lows, h.highs, h.counts
FROM wanted JOIN metrics_histogrampoint h
  ON h.definition_id = wanted.definition_id AND h.system_id IN (%s, %s)
 AND (wanted.workload_id IS NULL OR h.workload_id = wanted.workload_id)
 AND (wanted.since IS NULL OR h.observed_at >= wanted.since)
 AND (wanted.until IS NULL OR h.observed_at < wanted.until)
"""


def histograms_of_windows(
    windows: dict[int, Window], *, baseline_id: int, candidate_id: int
) -> dict[tuple[int, int], Buckets]:
    """(window position, system id) → the buckets of its histogram points; one query."""
    found: dict[tuple[int, int], Buckets] = {}
    if not windows:
        return found
    params: list[Any] = []
    for index, window in windows.items():
        params += [index, window.definition_id, window.workload_id, window.since, window.until]
    params += [baseline_id, candidate_id]
    sql = HISTOGRAMS_SQL.format(rows=", ".join([WANTED] * len(windows)))
    with read_connection().cursor() as cursor:
        cursor.execute(sql, params)
        for index, system_id, total, lows, highs, counts in cursor.fetchall():
            found.setdefault((index, system_id), Buckets()).add_point(total, lows, highs, counts)
    return found


def with_values(buckets: Buckets | None, values: np.ndarray) -> Buckets:
    """The side's exact values (as ranges of one value) beside its histogram buckets."""
    merged = Buckets()
    if buckets is not None:
        merged.add_point(buckets.total, buckets.lows, buckets.highs, buckets.counts)
    merged.add_values(values)
    return merged
