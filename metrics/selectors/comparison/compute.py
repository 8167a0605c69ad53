"""Old-vs-new comparison of one metric version: read, test, judge (docs/architecture.md, 'Comparisons
and verdicts').

Each side's sample is read once and sorted once (sql.py); `metrics.inference.infer` gives the
statistic's own interval and one-sided p-value on those sorted samples (order statistics for
quantiles, Welch–Fieller for the mean, Mann–Whitney U for `distribution`, none for min/max); the
verdict is a pure function of that inference (verdict.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Any, Required, TypedDict, Unpack

from django.conf import settings

from metrics.inference import STATISTICS, Inference, infer
from metrics.models import MetricDefinition, System, Workload
from metrics.retention import reaches_before_horizon, retention_horizon
from metrics.rollups.buckets import relative_bound
from metrics.rollups.sketch import ACCURACY
from metrics.selectors.comparison.sampling import SamplingCheck, sampling_check
from metrics.selectors.comparison.slices import (
    SlicedSides,
    pooled_workloads,
    size_warning,
    sliced_sides_fetch,
)
from metrics.selectors.comparison.sql import Side, SideStats, sides_fetch
from metrics.selectors.comparison.verdict import Verdict, comparison_verdict

# What `method` adds to the statistical method's name, by the read that answered (none: the rows).
FROM_ROLLUPS = " (rollups)"  # the day rollups' buckets settled it (intervals to the bucket edges)
FROM_BUCKETS = " (histogram buckets)"  # OTLP histogram points' buckets settled it
REREAD = " (rows: the rollups could not tell)"  # read exactly after the buckets could not settle it
CANNOT_TELL = ": cannot tell at the buckets' accuracy"  # and no exact read was possible here
# ... because the exact read is more rows than one request reads (a web request's `reread_max_rows`).
OVER_REREAD_LIMIT = (
    "The day rollups cannot settle this verdict, and reading its {rows:,} rows exactly is more than a "
    "request reads ({limit:,}, COMPARISON_REREAD_MAX_ROWS): narrow the window, or judge it with a gate "
    "criterion (an evaluation reads the rows)."
)
# The window reaches before the retention horizon (metrics.retention): the rollups were the only source.
BEFORE_HORIZON = " (rows before {horizon:%Y-%m-%d} are dropped by retention: the rollups alone)"
# ... but no rollups hold it yet (an old month's deltas not folded): the rows still there settled it.
BEFORE_HORIZON_ROWS = (
    " (reaches before {horizon:%Y-%m-%d}, the retention horizon, with no rollups yet: the rows kept)"
)

DEFAULT_ALPHA = 0.05
DEFAULT_MIN_SAMPLES = 30
# A grouped comparison judges at most this many groups (those with the most rows on both sides).
MAX_GROUPS = 20


class Judged(TypedDict, total=False):
    """What a comparison of sides is judged by, besides the sides (comparison_of_sides' keywords)."""

    definition: Required[MetricDefinition]
    workload: Workload | None
    since: datetime | None
    until: datetime | None
    statistic: str | None
    alpha: float
    min_samples: int
    null_ratio: float


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
    # The verdict is better or worse, not a draw or a lack of data (docs/architecture.md, 'Comparisons
    # and verdicts').
    significant: bool
    min_samples: int
    verdict: str
    reason: str
    # Answered from the day rollups (a side over settings.ROLLUP_THRESHOLD rows) or histogram buckets:
    # every value is within `accuracy` (relative) of the exact one and every interval contains the
    # exact one (bucket edges); `method` says which read answered (the suffixes FROM_ROLLUPS,
    # FROM_BUCKETS, REREAD and CANNOT_TELL above).
    approximate: bool = False
    accuracy: float | None = None
    # The day rollups were read first (before any exact re-read): the page's chart reads them too, so it
    # never reads rows the comparison did not (or that retention dropped).
    rollups_read: bool = False
    # Dimension slicing: the tag filters read, the group-by key, one comparison per group value present
    # on both sides (at most MAX_GROUPS; `groups_omitted` more), and what the reader should know.
    tags: dict[str, list[str]] = field(default_factory=dict)
    group_by: str | None = None
    groups: list[Group] = field(default_factory=list)
    groups_omitted: int = 0
    warnings: list[str] = field(default_factory=list)
    # A side's rows, or the two sides, are of different point kinds: pulled aggregates among pushed
    # samples, say (sampling.py; its warning says how many rows on which side).
    sampling_mixed: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Group:
    value: str
    comparison: Comparison


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
    tag_filters: dict[str, list[str]] | None = None,
    group_by: str | None = None,
    reread_max_rows: int | None = None,
) -> Comparison:
    """``null_ratio`` is a `distribution` criterion's threshold: its tests ask "better than t×".
    Tag filters or a group-by key read exact rows (slices.py); otherwise rows or day rollups (sql.py).
    ``reread_max_rows`` caps the exact re-read after the rollups could not tell (None: no cap)."""
    if (statistic or definition.statistic) not in STATISTICS:  # refused before any read
        raise ValueError(f"unknown statistic {statistic or definition.statistic}")
    judged: Judged = {
        "definition": definition,
        "workload": workload,
        "since": since,
        "until": until,
        "statistic": statistic,
        "alpha": alpha,
        "min_samples": min_samples,
        "null_ratio": null_ratio,
    }
    sampling = sampling_check(
        definition=definition,
        baseline=baseline,
        candidate=candidate,
        workload=workload,
        since=since,
        until=until,
        tag_filters=tag_filters,
    )
    if tag_filters or group_by:
        sliced = sliced_sides_fetch(
            definition=definition,
            baseline=baseline,
            candidate=candidate,
            workload=workload,
            since=since,
            until=until,
            tag_filters=tag_filters,
            group_by=group_by,
        )
        sliced_comparison = comparison_of_slices(
            sliced, tag_filters=tag_filters or {}, group_by=group_by, **judged
        )
        return _with_sampling(sliced_comparison, sampling)
    warnings = []
    if workload is None:
        pooled = pooled_workloads(
            definition=definition, baseline=baseline, candidate=candidate, since=since, until=until
        )
        warnings = [w for w in [size_warning(pooled)] if w]
    fetch = partial(
        sides_fetch,
        definition=definition,
        baseline=baseline,
        candidate=candidate,
        workload=workload,
        since=since,
        until=until,
    )
    comparison = comparison_of_sides(
        sides=fetch(), reread=partial(fetch, rollups=False), reread_max_rows=reread_max_rows, **judged
    )
    if warnings:
        comparison = replace(comparison, warnings=[*warnings, *comparison.warnings])
    return _with_sampling(comparison, sampling)


def _with_sampling(comparison: Comparison, sampling: SamplingCheck) -> Comparison:
    if not sampling.warnings:
        return comparison
    warnings = [*comparison.warnings, *sampling.warnings]
    return replace(comparison, warnings=warnings, sampling_mixed=sampling.mixed)


def comparison_of_slices(
    sliced: SlicedSides,
    *,
    tag_filters: dict[str, list[str]],
    group_by: str | None,
    **judged: Unpack[Judged],
) -> Comparison:
    """The pooled comparison of sliced sides, with one comparison per group present on both sides."""
    pooled = comparison_of_sides(sides=sliced.pooled, **judged)
    both = [(value, sides) for value, sides in sliced.groups.items() if min(s.stats.n for s in sides) > 0]
    both.sort(key=lambda item: (-sum(s.stats.n for s in item[1]), item[0]))
    kept = sorted(both[:MAX_GROUPS], key=lambda item: item[0])
    groups = [Group(value, comparison_of_sides(sides=sides, **judged)) for value, sides in kept]
    warnings = []
    if judged.get("workload") is None:
        warnings += [w for w in [size_warning(sliced.workloads)] if w]
    for system, total in sorted(sliced.capped.items()):
        warnings.append(
            f"{system} has {total:,} matching rows in the window; only the newest "
            f"{settings.ROLLUP_THRESHOLD:,} were read (tag filters read rows, not the day rollups). "
            "Narrow the window for an answer over all of them."
        )
    if len(both) > MAX_GROUPS:
        warnings.append(
            f"{len(both)} values of {group_by} have data on both sides; the {MAX_GROUPS} with the most "
            f"rows are shown, {len(both) - MAX_GROUPS} are left out (they still count in the pooled result)."
        )
    if group_by and not both:
        warnings.append(f"No value of {group_by} has data on both sides: only the pooled result is shown.")
    return replace(
        pooled,
        tags=tag_filters,
        group_by=group_by,
        groups=groups,
        groups_omitted=max(0, len(both) - MAX_GROUPS),
        warnings=warnings,
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
    reread: Callable[[], tuple[Side, Side]] | None = None,
    reread_max_rows: int | None = None,
) -> Comparison:
    """The comparison of samples already read (`sides_fetch`, or `sides_fetch_many` for a batch).

    Where the sides came from the rollups and their buckets cannot settle the verdict (the widened
    interval straddles 1, the exact one might not: `Inference.undecided`), `reread` reads the rows
    exactly and the answer is theirs; without it, or where the two sides hold more than
    `reread_max_rows` rows (a web request's cap: a 10M-row read would hold its worker for seconds),
    the answer says it cannot tell. Only that comparison pays the read."""
    statistic = statistic or definition.statistic
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic}")

    def judged(base: Side, cand: Side) -> tuple[Inference, Verdict]:
        inference = infer(
            statistic=statistic,
            direction=definition.direction,
            baseline=base.sample,
            candidate=cand.sample,
            alpha=alpha,
            null_ratio=null_ratio,
        )
        return inference, comparison_verdict(inference=inference, min_samples=min_samples)

    base, cand = sides
    rollups_read = base.from_rollups or cand.from_rollups
    inference, outcome = judged(base, cand)
    method = inference.method
    if inference.method == "none":  # min and max: exact from the rollups too, no interval to widen
        pass
    elif rollups_read:
        method += FROM_ROLLUPS
    elif base.approximate or cand.approximate:
        method += FROM_BUCKETS
    before_horizon = reaches_before_horizon(since)
    warnings = []
    if inference.undecided and outcome.verdict == "insufficient_data":
        rows = base.stats.n + cand.stats.n
        over_limit = reread_max_rows is not None and rows > reread_max_rows
        # No exact re-read where the rows may be gone: it would judge the kept rows alone.
        if reread is not None and rollups_read and not before_horizon:
            if over_limit:
                method += CANNOT_TELL
                warnings.append(OVER_REREAD_LIMIT.format(rows=rows, limit=reread_max_rows))
            else:
                base, cand = reread()
                inference, outcome = judged(base, cand)
                method = inference.method + REREAD
        else:
            method += CANNOT_TELL
    if before_horizon:
        said = BEFORE_HORIZON if rollups_read else BEFORE_HORIZON_ROWS
        method += said.format(horizon=retention_horizon())
    approximate = base.approximate or cand.approximate
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
        method=method,
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
        accuracy=_accuracy(base, cand) if approximate else None,
        rollups_read=rollups_read,
        warnings=warnings,
    )


def _accuracy(*sides: Side) -> float | None:
    """The relative error bound of an approximate answer: the sketches' ACCURACY for rollups; for
    histogram buckets, the widest of the side quantiles' brackets (None when one is open or holds 0)."""
    bounds = [bracket for side in sides if side.stats.bounds for bracket in side.stats.bounds.values()]
    return relative_bound(bounds) if bounds else ACCURACY
