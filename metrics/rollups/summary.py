"""How rows become the rollup of their series' day: one SQL rule, shared by the recompute (a day's rows
read from the table) and by ingest's deltas (a batch's rows as they were inserted), so the two paths
bucket, sum and combine alike and an incremental rollup equals a recomputed one.

Each fragment is a list of CTEs for a `WITH`, taking the parameter %(log_gamma)s (sketch.LOG_GAMMA).
"""

from __future__ import annotations

# The rollup's summary columns, in the order both fragments produce them (after the series-day key).
SUMMARY_COLUMNS = "n, total, m2, sumsq, min, max, zeros, bins, negative_bins"
SERIES_DAY = "definition_id, system_id, workload_id, day"


def bucket_key_sql(value: str, log_gamma: str) -> str:
    """The bucket of `value` (an SQL expression), ⌈ln|v| / ln γ⌉, 0 for zero; `log_gamma` is the parameter
    placeholder. The one place the bucketing is written in SQL: the rollups and a window's edge rows
    (metrics.rollups.read) must key alike for their counts to add."""
    return f"CASE WHEN {value} = 0 THEN 0 ELSE ceil(ln(abs({value})) / {log_gamma}::float8)::int END"


def summary_ctes(rows: str) -> str:
    """CTEs ending in `summary`: one row per (definition, system, workload, UTC day) of `rows`, a FROM item
    with the columns definition_id, system_id, workload_id, observed_at and value.

    Bucket the rows (sign, ⌈ln|v| / ln γ⌉), then fold the buckets: m2 combines the buckets' own squared
    deviations with their means' spread around the day's mean (Chan)."""
    return f"""
buckets AS (
    SELECT definition_id, system_id, workload_id, (observed_at AT TIME ZONE 'UTC')::date AS day,
           sign(value)::int AS sign,
           {bucket_key_sql("value", "%(log_gamma)s")} AS key,
           count(*) AS c, sum(value) AS s, sum(value * value) AS ss,
           coalesce(var_pop(value), 0) * count(*) AS m2, min(value) AS lo, max(value) AS hi
    FROM {rows}
    GROUP BY 1, 2, 3, 4, 5, 6
), centred AS (
    SELECT *, sum(s) OVER series / sum(c) OVER series AS mean
    FROM buckets WINDOW series AS (PARTITION BY {SERIES_DAY})
), summary AS (
    SELECT {SERIES_DAY}, sum(c) AS n, sum(s) AS total,
           sum(m2 + c * (s / c - mean) * (s / c - mean)) AS m2, sum(ss) AS sumsq, min(lo) AS min,
           max(hi) AS max, coalesce(sum(c) FILTER (WHERE sign = 0), 0) AS zeros,
           coalesce(jsonb_object_agg(key, c) FILTER (WHERE sign = 1), '{{}}'::jsonb) AS bins,
           coalesce(jsonb_object_agg(key, c) FILTER (WHERE sign = -1), '{{}}'::jsonb) AS negative_bins
    FROM centred
    GROUP BY {SERIES_DAY}
)"""


def combined_ctes(parts: str) -> str:
    """CTEs ending in `combined`: the summaries of `parts` (a CTE of summary rows: the series-day key and
    SUMMARY_COLUMNS, several rows per series-day) added into one row per series-day. Counts and bucket
    counts add, min and max take their extremes, and m2 combines as above (Chan): the sum of the parts'
    m2 plus each part's n × (its mean − the combined mean)²."""
    return f"""
part_means AS (
    SELECT *, sum(total) OVER series / sum(n) OVER series AS mean
    FROM {parts} WINDOW series AS (PARTITION BY {SERIES_DAY})
), moments AS (
    SELECT {SERIES_DAY}, sum(n) AS n, sum(total) AS total,
           sum(m2 + n * (total / n - mean) * (total / n - mean)) AS m2, sum(sumsq) AS sumsq, min(min) AS min,
           max(max) AS max, sum(zeros) AS zeros
    FROM part_means
    GROUP BY {SERIES_DAY}
), bucket_counts AS (
    SELECT {SERIES_DAY}, 1 AS sign, b.key, sum(b.value::bigint) AS c
    FROM {parts} p, jsonb_each_text(p.bins) AS b
    GROUP BY {SERIES_DAY}, b.key
    UNION ALL
    SELECT {SERIES_DAY}, -1 AS sign, b.key, sum(b.value::bigint) AS c
    FROM {parts} p, jsonb_each_text(p.negative_bins) AS b
    GROUP BY {SERIES_DAY}, b.key
), histograms AS (
    SELECT {SERIES_DAY},
           jsonb_object_agg(key, c::bigint) FILTER (WHERE sign = 1) AS bins,
           jsonb_object_agg(key, c::bigint) FILTER (WHERE sign = -1) AS negative_bins
    FROM bucket_counts
    GROUP BY {SERIES_DAY}
), combined AS (
    SELECT m.definition_id, m.system_id, m.workload_id, m.day, m.n, m.total, m.m2, m.sumsq, m.min, m.max,
           m.zeros, coalesce(h.bins, '{{}}'::jsonb) AS bins,
           coalesce(h.negative_bins, '{{}}'::jsonb) AS negative_bins
    FROM moments m LEFT JOIN histograms h USING ({SERIES_DAY})
)"""
