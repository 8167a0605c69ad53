"""The PostgreSQL part of a comparison: each side's sample, read once and sorted once.

One query returns each side's mean (PostgreSQL's avg) and its values as a float8 array in binary;
numpy sorts each array once. The quantiles, min and max are then read off the sorted array the way
PostgreSQL's percentile_cont computes them, to the last bit, so the database neither scans nor sorts
the rows a second time. The sorted samples go on to the tests, which need no further read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import psycopg
from django.db import connection

from metrics.models import MetricDefinition, System, Workload

QUANTILES = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}

SAMPLES_SQL = """
SELECT system_id, avg(value), array_agg(value)
FROM metrics_observation
WHERE definition_id = %(definition)s AND system_id IN (%(baseline)s, %(candidate)s) {filters}
GROUP BY system_id
"""


@dataclass(frozen=True)
class SideStats:
    system: str
    n: int
    mean: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None
    min: float | None
    max: float | None
    # The compared statistic's value on this side (the median for `distribution`) and its interval.
    value: float | None = None
    ci: tuple[float, float] | None = None

    def statistic(self, name: str) -> float | None:
        return getattr(self, name)


@dataclass(frozen=True)
class Side:
    stats: SideStats
    sample: np.ndarray  # every value in the window, ascending


def percentile_cont(ordered: np.ndarray, fraction: float) -> float:
    """PostgreSQL's percentile_cont of an ascending, non-empty sample (orderedsetaggs.c, float8_lerp)."""
    position = fraction * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    if low == high:
        return float(ordered[low])
    low_value, high_value = float(ordered[low]), float(ordered[high])
    return low_value + (position - low) * (high_value - low_value)


def _filters(workload: Workload | None, since: datetime | None, until: datetime | None) -> tuple[str, dict]:
    sql, params = "", {}
    if workload is not None:
        sql += " AND workload_id = %(workload)s"
        params["workload"] = workload.pk
    if since is not None:
        sql += " AND observed_at >= %(since)s"
        params["since"] = since
    if until is not None:
        sql += " AND observed_at < %(until)s"
        params["until"] = until
    return sql, params


def _side(system: System, row: tuple[float, list[float]] | None) -> Side:
    if row is None:
        return Side(SideStats(system.key, 0, None, None, None, None, None, None, None), np.empty(0))
    mean, values = row
    ordered = np.asarray(values, dtype=np.float64)
    ordered.sort()
    quantiles = {name: percentile_cont(ordered, fraction) for name, fraction in QUANTILES.items()}
    stats = SideStats(
        system.key, len(ordered), mean, **quantiles, min=float(ordered[0]), max=float(ordered[-1])
    )
    return Side(stats, ordered)


def sides_fetch(
    *,
    definition: MetricDefinition,
    baseline: System,
    candidate: System,
    workload: Workload | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> tuple[Side, Side]:
    """Both sides in one read. Binary transfer needs psycopg's own cursor: Django's cannot do it."""
    filters, params = _filters(workload, since, until)
    params.update(definition=definition.pk, baseline=baseline.pk, candidate=candidate.pk)
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(SAMPLES_SQL.format(filters=filters), params, binary=True)
        rows = {system_id: (mean, values) for system_id, mean, values in cursor.fetchall()}
    return _side(baseline, rows.get(baseline.pk)), _side(candidate, rows.get(candidate.pk))
