"""Old-vs-new comparison of one metric version (DESIGN.md §3): read, test, judge.

Each side's sample is read once and sorted once (sql.py); the Mann–Whitney U test is scipy's
(asymptotic method, tie and continuity corrected) on those samples; the verdict is a pure function of
the resulting numbers (verdict.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from scipy.stats import mannwhitneyu

from metrics.models import MetricDefinition, Statistic, System, Workload
from metrics.selectors.comparison.sql import SideStats, sides_fetch
from metrics.selectors.comparison.verdict import comparison_verdict

DEFAULT_ALPHA = 0.05
DEFAULT_MIN_SAMPLES = 30


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
    base, cand = sides_fetch(
        definition=definition,
        baseline=baseline,
        candidate=candidate,
        workload=workload,
        since=since,
        until=until,
    )
    u_stat = p_value = None
    if base.stats.n and cand.stats.n:
        test = mannwhitneyu(cand.sample, base.sample, method="asymptotic")
        u_stat, p_value = float(test.statistic), float(test.pvalue)
    outcome = comparison_verdict(
        statistic=statistic,
        higher_is_better=definition.higher_is_better,
        baseline_n=base.stats.n,
        candidate_n=cand.stats.n,
        baseline_value=base.stats.statistic(statistic),
        candidate_value=cand.stats.statistic(statistic),
        p_value=p_value,
        alpha=alpha,
        min_samples=min_samples,
    )
    return Comparison(
        metric=definition.ref,
        unit=definition.unit,
        direction=definition.direction,
        statistic=statistic,
        workload=workload.key if workload else None,
        since=since,
        until=until,
        baseline=base.stats,
        candidate=cand.stats,
        relative_performance=outcome.relative_performance,
        change_pct=outcome.change_pct,
        improvement_pct=outcome.improvement_pct,
        u_statistic=u_stat,
        p_value=p_value,
        alpha=alpha,
        significant=outcome.significant,
        min_samples=min_samples,
        verdict=outcome.verdict,
        reason=outcome.reason,
    )
