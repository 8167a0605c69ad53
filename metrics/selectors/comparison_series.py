"""Both sides of a comparison over its window, one point per hour or per UTC day: the page's chart.

Each point is the compared statistic of that bucket's observations (the median for `distribution`),
read the way the comparison read its sides: a side over settings.ROLLUP_THRESHOLD rows (and no tag
filter) comes from the day rollups, a point per UTC day with that day's sketches merged over the
workloads; otherwise from the rows, in one aggregate query with PostgreSQL doing each bucket's
percentile. Windows of at most MAX_HOURLY are bucketed by hour, longer ones by day.

One query either way. Grafana's query API (program/api/prometheus.py) reads the same series through
`window_series`, for a window no comparison was computed for: it applies the comparison's own
rows-or-rollups rule (metrics.rollups.read `window_reads_rollups`, one more query for its counts) and
fixes the bucket, so each step maps to one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

import orjson

from core.replica import read_connection
from metrics.inference import QUANTILES
from metrics.models import MetricDefinition, System, Workload
from metrics.rollups.read import Window, rollup_summaries, window_reads_rollups
from metrics.rollups.sketch import Sketch, percentile_cont
from metrics.selectors.comparison.compute import DEFAULT_ALPHA, DEFAULT_MIN_SAMPLES
from metrics.selectors.comparison.query import ComparisonQuery
from metrics.selectors.comparison.slices import TAG_MATCH
from metrics.selectors.comparison.sql import window_filters

MAX_HOURLY = timedelta(days=3)

# One query: the bucket (hour for a window of at most MAX_HOURLY, else day) is chosen in the query,
# from the window's ends, or where it is open, from its first row and now (the time index answers).
# A caller that names the bucket (`bucket=`) replaces the choice with it.
BUCKET_CHOICE_SQL = """
    SELECT CASE WHEN coalesce(%(until_at)s::timestamptz, now()) - coalesce(%(since_at)s::timestamptz, (
        SELECT min(observed_at) FROM metrics_observation
        WHERE definition_id = %(definition)s AND system_id IN (%(baseline)s, %(candidate)s) {filters}
    )) <= %(max_hourly)s::interval THEN 'hour' ELSE 'day' END AS bucket
"""
BUCKETS_SQL = """
SELECT system_id, date_trunc(chosen.bucket, observed_at AT TIME ZONE 'UTC') AS at, {aggregate}, chosen.bucket
FROM metrics_observation, ({choice}) AS chosen
WHERE definition_id = %(definition)s AND system_id IN (%(baseline)s, %(candidate)s) {filters}
GROUP BY 1, 2, 4 ORDER BY 2
"""
ROLLUPS_SQL = """
SELECT system_id, day, n, total, m2, min, max, zeros, bins, negative_bins
FROM metrics_observationrollup
WHERE definition_id = %(definition)s AND system_id IN (%(baseline)s, %(candidate)s) {filters}
ORDER BY day
"""


@dataclass(frozen=True)
class Series:
    statistic: str  # what each point is: "p95", "mean", … ("median" for distribution)
    bucket: str  # "hour" | "day"
    baseline: list[tuple[datetime, float]]
    candidate: list[tuple[datetime, float]]
    from_rollups: bool = False


def _aggregate(statistic: str) -> str:
    if statistic == "count":
        return "count(*)"
    if statistic in ("mean", "min", "max"):
        return {"mean": "avg", "min": "min", "max": "max"}[statistic] + "(value)"
    fraction = QUANTILES.get(statistic, 0.5)
    return f"percentile_cont({fraction}) WITHIN GROUP (ORDER BY value)"


def _shown(statistic: str) -> str:
    return "median" if statistic == "distribution" else statistic


def comparison_series(
    query: ComparisonQuery, *, statistic: str, rollups: bool, bucket: str | None = None
) -> Series:
    """`rollups`: the comparison read a side from the day rollups (it had that many rows); the chart
    follows, so it never reads rows the comparison did not. `bucket` ("hour" | "day") overrides the
    choice by the window's length, for the rows (the rollups are days). `statistic` may also be
    "count": the rows in each bucket."""
    params: dict[str, Any] = {
        "definition": query.definition.pk,
        "baseline": query.baseline.pk,
        "candidate": query.candidate.pk,
    }
    if rollups and not query.tag_filters:
        return _from_rollups(query, statistic, params)
    filters, window = window_filters(query.workload, query.since, query.until)
    params.update(window)
    if query.tag_filters:
        filters += " AND " + TAG_MATCH.format(filters="%(tags)s::jsonb", row="metrics_observation")
        params["tags"] = orjson.dumps(query.tag_filters).decode()
    params.update(since_at=query.since, until_at=query.until, max_hourly=MAX_HOURLY)
    with read_connection().cursor() as cursor:
        if bucket is None:
            choice = BUCKET_CHOICE_SQL.format(filters=filters)
        else:
            choice, params["bucket"] = "SELECT %(bucket)s::text AS bucket", bucket
        cursor.execute(
            BUCKETS_SQL.format(filters=filters, aggregate=_aggregate(statistic), choice=choice), params
        )
        rows = cursor.fetchall()
    bucket = rows[0][3] if rows else (bucket or "day")
    sides: dict[int, list[tuple[datetime, float]]] = {query.baseline.pk: [], query.candidate.pk: []}
    for system_id, at, value, _ in rows:
        if value is not None:
            sides[system_id].append((at.replace(tzinfo=UTC), float(value)))
    return Series(_shown(statistic), bucket, sides[query.baseline.pk], sides[query.candidate.pk])


def _from_rollups(query: ComparisonQuery, statistic: str, params: dict[str, Any]) -> Series:
    filters = ""
    if query.workload is not None:
        filters += " AND workload_id = %(workload)s"
        params["workload"] = query.workload.pk
    if query.since is not None:
        filters += " AND day >= %(first_day)s"
        params["first_day"] = query.since.astimezone(UTC).date()
    if query.until is not None:
        filters += " AND day <= %(last_day)s"
        params["last_day"] = (query.until.astimezone(UTC) - timedelta(microseconds=1)).date()
    days: dict[tuple[int, object], Sketch] = {}
    with read_connection().cursor() as cursor:
        cursor.execute(ROLLUPS_SQL.format(filters=filters), params)
        for system_id, day, n, total, m2, low, high, zeros, bins, negative in cursor.fetchall():
            sketch = days.setdefault((system_id, day), Sketch())
            sketch.moments.add(n, total, m2, low, high)
            sketch.add_bins(bins or {}, negative or {}, zeros or 0)
    sides: dict[int, list[tuple[datetime, float]]] = {query.baseline.pk: [], query.candidate.pk: []}
    for (system_id, day), sketch in days.items():
        value = _of_sketch(sketch, statistic)
        if value is not None:
            sides[system_id].append((datetime.combine(day, time(), tzinfo=UTC), value))  # type: ignore[arg-type]
    return Series(_shown(statistic), "day", sides[query.baseline.pk], sides[query.candidate.pk], True)


def _of_sketch(sketch: Sketch, statistic: str) -> float | None:
    if not sketch.moments.n:
        return None
    if statistic == "count":
        return float(sketch.moments.n)
    if statistic == "mean":
        return sketch.moments.mean
    if statistic in ("min", "max"):
        return float(getattr(sketch.moments, statistic))
    return percentile_cont(sketch, QUANTILES.get(statistic, 0.5))


def window_series(
    *,
    definition: MetricDefinition,
    baseline: System,
    candidate: System,
    workload: Workload | None,
    since: datetime,
    until: datetime,
    statistics: Sequence[str],
    bucket: str,
) -> dict[str, Series]:
    """The comparison chart's series of a window no comparison was computed for (the Prometheus-style
    query API): each statistic's `comparison_series`, reading rows or day rollups by the comparison's
    own rule, metrics.rollups.read `window_reads_rollups`: a side with rollups over
    settings.ROLLUP_THRESHOLD rows in its whole days, or with rollups in a window reaching before the
    retention horizon; never for a definition with histogram points).
    One query for that rule (the rollups' counts, `rollup_summaries`), then one per statistic."""
    query = ComparisonQuery(
        definition=definition,
        baseline=baseline,
        candidate=candidate,
        workload=workload,
        since=since,
        until=until,
        statistic=None,
        alpha=DEFAULT_ALPHA,
        min_samples=DEFAULT_MIN_SAMPLES,
        tag_filters={},
        group_by=None,
    )
    window = Window(definition.pk, workload.pk if workload else None, since, until)
    (counts,) = rollup_summaries([window], baseline_id=baseline.pk, candidate_id=candidate.pk)
    rollups = window_reads_rollups(
        [n for n, _, _ in counts.values()], since=since, has_histograms=definition.has_histograms
    )
    return {
        statistic: comparison_series(query, statistic=statistic, rollups=rollups, bucket=bucket)
        for statistic in statistics
    }
