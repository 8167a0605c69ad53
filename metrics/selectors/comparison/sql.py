"""The PostgreSQL part of a comparison: each side's sample, read once and sorted once.

First the day rollups say how many rows each side has (metrics.rollups.read): over
settings.ROLLUP_THRESHOLD on a side, both sides are the merged day sketches plus the bucketed rows of
the window's partial edge days (approximate: intervals to the buckets' edges). Otherwise the exact
read below, which is also the read a comparison falls back to where the buckets cannot tell.

One query returns each side's mean (PostgreSQL's avg) and its values as a float8 array in binary;
numpy sorts each array once. The quantiles, min and max are then read off the sorted array the way
PostgreSQL's percentile_cont computes them, to the last bit, so the database neither scans nor sorts
the rows a second time. The sorted samples go on to the tests, which need no further read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from core.replica import read_connection
from metrics.models import MetricDefinition, System, Workload
from metrics.rollups.buckets import Buckets
from metrics.rollups.read import Window, sketches_over_threshold
from metrics.rollups.sketch import Sketch, percentile_cont
from metrics.selectors.comparison.histograms import histograms_of_windows, with_values

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
    # A side with histogram buckets: where each quantile, min and max certainly lies (the buckets
    # holding their ranks); None for sides read from values.
    bounds: dict[str, tuple[float, float]] | None = None

    def statistic(self, name: str) -> float | None:
        value: float | None = getattr(self, name)
        return value


@dataclass(frozen=True)
class Side:
    stats: SideStats
    # every value in the window, ascending; or its rollup sketch; or its values and histogram buckets
    sample: np.ndarray | Sketch | Buckets

    @property
    def approximate(self) -> bool:
        return isinstance(self.sample, Sketch | Buckets)

    @property
    def from_rollups(self) -> bool:
        """Read from the day rollups (and the rows of the window's partial edge days)."""
        return isinstance(self.sample, Sketch)


def window_filters(
    workload: Workload | None, since: datetime | None, until: datetime | None, *, alias: str = ""
) -> tuple[str, dict[str, Any]]:
    """The SQL conditions (and their parameters) of a side's workload and time window; `alias` names
    the observations table when the query has others ("o")."""
    column = f"{alias}." if alias else ""
    sql, params = "", dict[str, Any]()
    if workload is not None:
        sql += f" AND {column}workload_id = %(workload)s"
        params["workload"] = workload.pk
    if since is not None:
        sql += f" AND {column}observed_at >= %(since)s"
        params["since"] = since
    if until is not None:
        sql += f" AND {column}observed_at < %(until)s"
        params["until"] = until
    return sql, params


def side_of_sample(system: System, sample: np.ndarray | Sketch | Buckets, mean: float | None) -> Side:
    """A side from its ascending sample (or rollup sketch) and its mean: every statistic read off it."""
    if not len(sample):
        return Side(SideStats(system.key, 0, None, None, None, None, None, None, None), sample)
    stats = SideStats(
        system.key,
        len(sample),
        mean,
        p50=percentile_cont(sample, QUANTILES["p50"]),
        p90=percentile_cont(sample, QUANTILES["p90"]),
        p95=percentile_cont(sample, QUANTILES["p95"]),
        p99=percentile_cont(sample, QUANTILES["p99"]),
        min=float(sample[0]),
        max=float(sample[-1]),
    )
    if isinstance(sample, Buckets):
        bounds = {name: sample.bound(fraction) for name, fraction in QUANTILES.items()}
        stats = replace(stats, bounds={**bounds, "min": sample.bracket(0), "max": sample.bracket(-1)})
    return Side(stats, sample)


def bucket_side(system: System, side: Side, buckets: Buckets | None) -> Side:
    """An exact side with the histogram points of its window (maybe none: the other side has some,
    and the tests read both sides the same way)."""
    assert isinstance(side.sample, np.ndarray)  # histogram windows are never read from rollups
    merged = with_values(buckets, side.sample)
    return side_of_sample(system, merged, merged.moments.mean)


def _side(system: System, row: tuple[float, list[float]] | None) -> Side:
    if row is None:
        return side_of_sample(system, np.empty(0), None)
    mean, values = row
    ordered = np.asarray(values, dtype=np.float64)
    ordered.sort()
    return side_of_sample(system, ordered, mean)


def sketch_side(system: System, sketch: Sketch) -> Side:
    """A side read from rollups: the same statistics, each within the sketch's accuracy."""
    return side_of_sample(system, sketch, sketch.moments.mean)


# Reads the exact samples of the windows at these positions, all at once: position → both sides.
ExactSides = Callable[[list[int]], dict[int, tuple[Side, Side]]]


def sides_of_windows(
    windows: list[Window], *, baseline: System, candidate: System, exact_sides: ExactSides
) -> list[tuple[Side, Side]]:
    """Both sides of every window, in their order, by one rule for every reader (`sides_fetch`, the
    batch of a gate page, a calibration's moments): a window where a side has more than
    settings.ROLLUP_THRESHOLD rows is read from the merged day sketches (metrics.rollups.read, two
    queries for all of them), the others by `exact_sides` (each reader's own exact read). A window
    whose definition has OTLP histogram points is read exactly and gets its points' buckets (one more
    query; the rollups' first query says which windows)."""
    thresholds = sketches_over_threshold(windows, baseline_id=baseline.pk, candidate_id=candidate.pk)
    large = thresholds.sketches
    with_histograms = {i: windows[i] for i in sorted(thresholds.histograms)}
    exact = [i for i in range(len(windows)) if i not in large]
    read = exact_sides(exact) if exact else {}
    if with_histograms:  # one more query, only for definitions that have histogram points
        found = histograms_of_windows(with_histograms, baseline_id=baseline.pk, candidate_id=candidate.pk)
        for i in with_histograms:
            base, cand = read[i]
            base_buckets, cand_buckets = found.get((i, baseline.pk)), found.get((i, candidate.pk))
            if base_buckets is not None or cand_buckets is not None:
                read[i] = (
                    bucket_side(baseline, base, base_buckets),
                    bucket_side(candidate, cand, cand_buckets),
                )
    return [
        (sketch_side(baseline, large[i][0]), sketch_side(candidate, large[i][1])) if i in large else read[i]
        for i in range(len(windows))
    ]


def sides_fetch(
    *,
    definition: MetricDefinition,
    baseline: System,
    candidate: System,
    workload: Workload | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    rollups: bool = True,
) -> tuple[Side, Side]:
    """Both sides in one read. Binary transfer needs psycopg's own cursor: Django's cannot do it.
    `rollups=False` reads the rows whatever their number: the answer the rollups could not give."""

    def exact_sides(positions: list[int]) -> dict[int, tuple[Side, Side]]:
        filters, params = window_filters(workload, since, until)
        params.update(definition=definition.pk, baseline=baseline.pk, candidate=candidate.pk)
        db = read_connection()
        db.ensure_connection()
        with psycopg.Cursor(db.connection) as cursor:
            cursor.execute(SAMPLES_SQL.format(filters=filters), params, binary=True)
            rows = {system_id: (mean, values) for system_id, mean, values in cursor.fetchall()}
        return {0: (_side(baseline, rows.get(baseline.pk)), _side(candidate, rows.get(candidate.pk)))}

    if not rollups:
        return exact_sides([0])[0]
    window = Window(definition.pk, workload.pk if workload else None, since, until)
    ((base, cand),) = sides_of_windows(
        [window], baseline=baseline, candidate=candidate, exact_sides=exact_sides
    )
    return base, cand
