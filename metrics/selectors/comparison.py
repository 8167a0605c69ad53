"""Old-vs-new comparison of one metric version (DESIGN.md §3).

Both sides' statistics come from PostgreSQL (percentile_cont). The Mann–Whitney U test is computed
from ranks in PostgreSQL too, so no raw values travel to Python; the p-value uses the same normal
approximation with tie and continuity correction as scipy.stats.mannwhitneyu(method="asymptotic"),
and tests check the two agree.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import datetime

from django.db import connection
from scipy.stats import norm

from metrics.models import MetricDefinition, Statistic, System, Workload

DEFAULT_ALPHA = 0.05
DEFAULT_MIN_SAMPLES = 30


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

    def statistic(self, name: str) -> float | None:
        return getattr(self, name)


@dataclass(frozen=True)
class Comparison:
    metric: str
    unit: str
    direction: str
    statistic: str
    workload: str | None
    since: datetime | None
    until: datetime | None
    baseline: SideStats
    candidate: SideStats
    relative_performance: float | None
    change_pct: float | None
    improvement_pct: float | None
    u_statistic: float | None
    p_value: float | None
    alpha: float
    significant: bool
    min_samples: int
    verdict: str
    reason: str

    def as_dict(self) -> dict:
        return asdict(self)


STATS_SQL = """
SELECT system_id, count(*), avg(value),
       percentile_cont(ARRAY[0.5, 0.9, 0.95, 0.99]) WITHIN GROUP (ORDER BY value),
       min(value), max(value)
FROM metrics_observation
WHERE definition_id = %(definition)s AND system_id IN (%(baseline)s, %(candidate)s) {filters}
GROUP BY system_id
"""

# Rank sum of the candidate with average ranks for ties, and Σ(t³ - t) over tie groups (written as Σ
# over rows of t² - 1). With ORDER BY value, count(*) counts every row up to the last tied peer, so
# rank() and count(*) over one window give both ends of a tie group: one sort, one window pass.
RANKS_SQL = """
WITH ranked AS (
    SELECT system_id = %(candidate)s AS is_candidate, rank() OVER w AS first, count(*) OVER w AS last
    FROM metrics_observation
    WHERE definition_id = %(definition)s AND system_id IN (%(baseline)s, %(candidate)s) {filters}
    WINDOW w AS (ORDER BY value)
)
SELECT sum((first + last) / 2.0) FILTER (WHERE is_candidate),
       sum((last - first + 1) * (last - first + 1) - 1)
FROM ranked
"""


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


def _side(system: System, row: tuple | None) -> SideStats:
    if row is None:
        return SideStats(system.key, 0, None, None, None, None, None, None, None)
    _, n, mean, percentiles, low, high = row
    p50, p90, p95, p99 = percentiles
    return SideStats(system.key, n, mean, p50, p90, p95, p99, low, high)


def mann_whitney_from_ranks(
    rank_sum_candidate: float, tie_term: float, n_base: int, n_cand: int
) -> tuple[float, float]:
    """(U of the candidate, two-sided p) — scipy's asymptotic method with continuity correction."""
    u_cand = rank_sum_candidate - n_cand * (n_cand + 1) / 2
    u_base = n_base * n_cand - u_cand
    big_u = max(u_cand, u_base)
    total = n_base + n_cand
    mu = n_base * n_cand / 2
    variance = n_base * n_cand / 12 * ((total + 1) - tie_term / (total * (total - 1)))
    if variance <= 0:
        return u_cand, 1.0
    z = (big_u - mu - 0.5) / math.sqrt(variance)
    return u_cand, float(min(1.0, 2 * norm.sf(z)))


def comparison_compute(
    *,
    definition: MetricDefinition,
    baseline: System,
    candidate: System,
    workload: Workload | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    statistic: str | None = None,
    alpha: float = DEFAULT_ALPHA,
    min_samples: int = DEFAULT_MIN_SAMPLES,
) -> Comparison:
    statistic = statistic or definition.statistic
    if statistic not in Statistic.values:
        raise ValueError(f"unknown statistic {statistic}")
    filters, params = _filters(workload, since, until)
    params.update(definition=definition.pk, baseline=baseline.pk, candidate=candidate.pk)
    with connection.cursor() as cursor:
        cursor.execute(STATS_SQL.format(filters=filters), params)
        rows = {row[0]: row for row in cursor.fetchall()}
        base, cand = _side(baseline, rows.get(baseline.pk)), _side(candidate, rows.get(candidate.pk))
        u_stat = p_value = None
        if base.n and cand.n:
            cursor.execute(RANKS_SQL.format(filters=filters), params)
            rank_sum, tie_term = cursor.fetchone()
            u_stat, p_value = mann_whitney_from_ranks(float(rank_sum), float(tie_term), base.n, cand.n)

    base_value, cand_value = base.statistic(statistic), cand.statistic(statistic)
    relative = change = improvement = None
    if base_value is not None and cand_value is not None:
        if base_value != 0:
            change = (cand_value - base_value) / abs(base_value) * 100
        if definition.higher_is_better and base_value > 0:
            relative = cand_value / base_value
        elif not definition.higher_is_better and cand_value > 0:
            relative = base_value / cand_value
        if relative is not None:
            improvement = (relative - 1) * 100

    significant = p_value is not None and p_value < alpha
    if base.n < min_samples or cand.n < min_samples:
        verdict = "insufficient_data"
        reason = (
            f"needs at least {min_samples} observations on each side (baseline {base.n}, candidate {cand.n})."
        )
    elif relative is None:
        verdict, reason = "insufficient_data", f"the baseline {statistic} is zero; no ratio can be formed."
    elif not significant:
        verdict = "no_difference"
        reason = f"p = {p_value:.3g} ≥ α = {alpha}: the difference is not significant."
    elif relative > 1:
        verdict, reason = (
            "better",
            f"candidate {statistic} is {relative:.3f}× the baseline's (p = {p_value:.3g}).",
        )
    else:
        verdict, reason = "worse", f"candidate reaches {relative:.3f}× of the baseline (p = {p_value:.3g})."
    return Comparison(
        metric=definition.ref,
        unit=definition.unit,
        direction=definition.direction,
        statistic=statistic,
        workload=workload.key if workload else None,
        since=since,
        until=until,
        baseline=base,
        candidate=cand,
        relative_performance=relative,
        change_pct=change,
        improvement_pct=improvement,
        u_statistic=u_stat,
        p_value=p_value,
        alpha=alpha,
        significant=significant,
        min_samples=min_samples,
        verdict=verdict,
        reason=reason,
    )
