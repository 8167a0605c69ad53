"""Old-vs-new comparison of one metric version (DESIGN.md §3): read, test, judge.

Each side's sample is read once and sorted once (sql.py); `metrics.inference.infer` gives the
statistic's own interval and one-sided p-value on those sorted samples (order statistics for
quantiles, Welch–Fieller for the mean, Mann–Whitney U for `distribution`, none for min/max); the
verdict is a pure function of that inference (verdict.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from datetime import datetime

from metrics.inference import STATISTICS, infer
from metrics.models import MetricDefinition, System, Workload
from metrics.rollups.read import effective_window
from metrics.rollups.sketch import ACCURACY
from metrics.selectors.comparison.sql import Side, SideStats, sides_fetch
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
    relative_performance_ci: tuple[float, float] | None
    change_pct: float | None
    improvement_pct: float | None
    method: str
    p_value: float | None  # one-sided, H1: the candidate is better; None where no test applies
    effect_size: float | None  # distribution only: P(a candidate observation beats a baseline one)
    p_value_worse: float | None  # distribution only: one-sided, H1: the candidate is worse
    null_ratio: float  # distribution only: the relative performance the tests are against (1 here)
    alpha: float
    significant: bool  # DESIGN.md §3: the verdict is better or worse, not a draw or a lack of data
    min_samples: int
    verdict: str
    reason: str
    # Read from the day rollups (a side over settings.ROLLUP_THRESHOLD rows): every value and bound is
    # within `accuracy` (relative) of the exact one over the whole days of the window (since/until).
    approximate: bool = False
    accuracy: float | None = None

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
    null_ratio: float = 1.0,
) -> Comparison:
    """``null_ratio`` is a `distribution` criterion's threshold: its tests ask "better than t×"."""
    if (statistic or definition.statistic) not in STATISTICS:  # refused before any read
        raise ValueError(f"unknown statistic {statistic or definition.statistic}")
    sides = sides_fetch(
        definition=definition,
        baseline=baseline,
        candidate=candidate,
        workload=workload,
        since=since,
        until=until,
    )
    return comparison_of_sides(
        definition=definition,
        sides=sides,
        workload=workload,
        since=since,
        until=until,
        statistic=statistic,
        alpha=alpha,
        min_samples=min_samples,
        null_ratio=null_ratio,
    )


def comparison_of_sides(
    *,
    definition: MetricDefinition,
    sides: tuple[Side, Side],
    workload: Workload | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    statistic: str | None = None,
    alpha: float = DEFAULT_ALPHA,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    null_ratio: float = 1.0,
) -> Comparison:
    """The comparison of samples already read (`sides_fetch`, or `sides_fetch_many` for a batch)."""
    statistic = statistic or definition.statistic
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic}")
    base, cand = sides
    inference = infer(
        statistic=statistic,
        direction=definition.direction,
        baseline=base.sample,
        candidate=cand.sample,
        alpha=alpha,
        null_ratio=null_ratio,
    )
    outcome = comparison_verdict(inference=inference, min_samples=min_samples)
    approximate = base.approximate or cand.approximate
    if approximate:
        since, until = effective_window(since, until)
    return Comparison(
        metric=definition.ref,
        unit=definition.unit,
        direction=definition.direction,
        statistic=statistic,
        workload=workload.key if workload else None,
        since=since,
        until=until,
        baseline=replace(base.stats, value=inference.baseline.value, ci=inference.baseline.ci),
        candidate=replace(cand.stats, value=inference.candidate.value, ci=inference.candidate.ci),
        relative_performance=inference.relative_performance,
        relative_performance_ci=inference.relative_performance_ci,
        change_pct=outcome.change_pct,
        improvement_pct=outcome.improvement_pct,
        method=inference.method,
        p_value=inference.p_value,
        effect_size=inference.effect_size,
        p_value_worse=inference.p_value_worse,
        null_ratio=inference.null_ratio,
        alpha=alpha,
        significant=outcome.verdict in ("better", "worse"),
        min_samples=min_samples,
        verdict=outcome.verdict,
        reason=outcome.reason,
        approximate=approximate,
        accuracy=ACCURACY if approximate else None,
    )
