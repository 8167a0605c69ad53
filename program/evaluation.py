"""Judging one criterion from the metrics comparison: pass | fail | inconclusive, with the numbers.

A threshold is a hypothesis (metrics.inference.judge): with require_significant a criterion passes
only when its whole (1 − α) interval clears the threshold, fails when the whole interval is on the
wrong side, and is inconclusive otherwise (or when there is no interval, as for min/max). Without
it the point estimate decides and the interval is still kept in the evidence.

A `distribution` criterion has no interval: its threshold is tested directly, by a one-sided
Mann–Whitney U against the baseline moved by the threshold (metrics.inference.judge_shift)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, TypedDict, cast

from django.utils import timezone

from metrics.models import MetricDefinition, System, Workload
from metrics.public import (
    Comparison,
    Side,
    SlicedSides,
    comparison_compute,
    comparison_of_sides,
    comparison_of_slices,
    judge,
    judge_shift,
)
from program.evaluation_every import every_metric_judge
from program.evaluation_groups import worst_group_of
from program.models import Criterion, CriterionResult

Outcome = CriterionResult.Outcome
MSG_NO_SHIFT = (
    "a distribution criterion compares two systems: it needs a relative or improvement "
    "threshold above 0 × the baseline."
)


class _Judged(TypedDict):
    """What every comparison of one criterion is asked (metrics.selectors.comparison)."""

    definition: MetricDefinition
    workload: Workload | None
    since: datetime | None
    statistic: str | None
    min_samples: int
    null_ratio: float


class _Sliced(TypedDict):
    tag_filters: dict[str, list[str]]
    group_by: str | None


class _SideStats(Protocol):
    """What the evidence keeps of one side of a comparison (Comparison.baseline and .candidate)."""

    @property
    def system(self) -> str: ...
    @property
    def n(self) -> int: ...
    @property
    def value(self) -> float | None: ...
    @property
    def ci(self) -> tuple[float, float] | None: ...


@dataclass
class Judgement:
    outcome: str
    reason: str
    value: float | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


def criterion_judge(
    criterion: Criterion,
    *,
    baseline: System,
    candidate: System,
    definition: MetricDefinition | None = None,
    sides: tuple[Side, Side] | SlicedSides | None = None,
    now: datetime | None = None,
) -> Judgement:
    """`definition` judges the criterion under another version of its metric than the pinned one (the
    gate page's shadow results, never stored); `sides` are both sides' samples read already, in the
    criterion's window ending `now` (program.shadows reads them for many criteria in one query)."""
    if criterion.kind == Criterion.Kind.MANUAL:
        if criterion.attested_at:
            who = criterion.attested_by.get_username() if criterion.attested_by else "someone"
            return Judgement(
                Outcome.PASS,
                f"attested by {who} on {criterion.attested_at:%d %b %Y}.",
                evidence={"link": criterion.attestation_link},
            )
        return Judgement(Outcome.INCONCLUSIVE, "not attested yet.")
    if criterion.unbound_slots:
        return Judgement(Outcome.INCONCLUSIVE, unbound_reason(criterion))
    if criterion.kind == Criterion.Kind.EVERY_METRIC:
        now = now or timezone.now()
        since = criterion_window_start(criterion, now)
        return Judgement(
            *every_metric_judge(criterion, baseline=baseline, candidate=candidate, since=since, until=now)
        )

    shift_ratio = distribution_null_ratio(criterion)
    if criterion.statistic == "distribution" and shift_ratio is None:
        return Judgement(Outcome.INCONCLUSIVE, MSG_NO_SHIFT)
    metric = definition or criterion.metric
    if metric is None:  # the services refuse a measured criterion without one (or an unbound slot)
        return Judgement(Outcome.INCONCLUSIVE, "needs a metric.")
    now = now or timezone.now()
    since = criterion_window_start(criterion, now)
    options: _Judged = {
        "definition": metric,
        "workload": criterion.workload,
        "since": since,
        "statistic": criterion.statistic or None,
        "min_samples": criterion.min_samples,
        "null_ratio": shift_ratio or 1.0,
    }
    sliced: _Sliced = {"tag_filters": criterion.tag_filters or {}, "group_by": criterion.group_by or None}
    if sides is None:
        comparison = comparison_compute(baseline=baseline, candidate=candidate, **options, **sliced)
    elif isinstance(sides, SlicedSides):
        comparison = comparison_of_slices(sides, **sliced, **options)
    else:
        comparison = comparison_of_sides(sides=sides, **options)
    judgement = comparison_judge(criterion, comparison, since=since, until=now)
    if not criterion.group_by:
        return judgement
    outcome, value, reason, groups, deciding = worst_group_of(
        criterion, comparison, lambda group: comparison_judge(criterion, group, since=since, until=now)
    )
    # The top-level numbers stay the pooled comparison's; `value_ci` is the deciding group's, as is
    # the judged value, so the interval shown beside the threshold is the one that decided.
    evidence = {**judgement.evidence, "group_by": criterion.group_by, "groups": groups}
    evidence["deciding_group"] = deciding
    evidence["value_ci"] = next((g["value_ci"] for g in groups if g["value"] == deciding), None)
    evidence["pooled"] = {"outcome": judgement.outcome, "value": judgement.value, "reason": judgement.reason}
    return Judgement(outcome, reason, value, evidence)


def comparison_judge(
    criterion: Criterion, comparison: Comparison, *, since: datetime | None, until: datetime
) -> Judgement:
    """One comparison (the pooled one, or one group's) against the criterion's threshold."""
    shift_ratio = distribution_null_ratio(criterion)
    now = until
    estimate, ci, label, no_interval = _judged(criterion, comparison)
    evidence = _evidence(comparison, since=since, until=now, value_ci=ci)
    needs_both = criterion.kind != Criterion.Kind.ABSOLUTE
    n_short = (comparison.baseline.n < criterion.min_samples and needs_both) or (
        comparison.candidate.n < criterion.min_samples
    )
    if n_short:
        return Judgement(
            Outcome.INCONCLUSIVE,
            f"too few samples: baseline {comparison.baseline.n}, candidate {comparison.candidate.n}, "
            f"need {criterion.min_samples}.",
            evidence=evidence,
        )
    if criterion.threshold is None:  # the services refuse a measured criterion without one
        return Judgement(Outcome.INCONCLUSIVE, "needs a threshold.", evidence=evidence)
    if comparison.statistic == "distribution":
        if shift_ratio is None:
            return Judgement(Outcome.INCONCLUSIVE, MSG_NO_SHIFT, evidence=evidence)
        outcome, why = judge_shift(
            estimate=comparison.relative_performance,
            p_better=comparison.p_value,
            p_worse=comparison.p_value_worse,
            alpha=comparison.alpha,
            no_test_reason=comparison.reason,
            operator=criterion.operator,
            threshold=shift_ratio,
            require_significant=criterion.require_significant,
        )
        if criterion.kind == Criterion.Kind.IMPROVEMENT:
            why = f"improvement {criterion.get_operator_display()} {criterion.threshold:g} % is {why}"
        return Judgement(outcome, why, estimate, evidence)
    outcome, why = judge(
        estimate=estimate,
        ci=ci,
        operator=criterion.operator,
        threshold=criterion.threshold,
        require_significant=criterion.require_significant,
        no_interval_reason=no_interval,
    )
    return Judgement(outcome, f"{label}: {why}" if estimate is not None else why, estimate, evidence)


def unbound_reason(criterion: Criterion) -> str:
    """Why a criterion from a template cannot be judged yet: the slots it still waits for."""
    parts = []
    if criterion.slot in criterion.unbound_slots:
        parts.append(f"needs a metric: slot '{criterion.slot}' is not bound")
    if criterion.workload_slot in criterion.unbound_slots:
        parts.append(f"needs a workload: slot '{criterion.workload_slot}' is not bound")
    return "; ".join(parts) + "."


def criterion_window_start(criterion: Criterion, now: datetime) -> datetime | None:
    """Only the last `window_days` count; None: all the data."""
    return now - timedelta(days=criterion.window_days) if criterion.window_days else None


def distribution_null_ratio(criterion: Criterion) -> float | None:
    """The relative performance a `distribution` criterion tests against; None where there is none
    (an absolute criterion, or a threshold at or below 0 × the baseline)."""
    if criterion.statistic != "distribution" or criterion.threshold is None:
        return None
    if criterion.kind == Criterion.Kind.RELATIVE:
        ratio = criterion.threshold
    elif criterion.kind == Criterion.Kind.IMPROVEMENT:
        ratio = 1 + criterion.threshold / 100
    else:
        return None
    return ratio if ratio > 0 else None


def _judged(
    criterion: Criterion, comparison: Comparison
) -> tuple[float | None, tuple[float, float] | None, str, str]:
    """The estimate a criterion compares with its threshold, its interval, its label and, where there
    is no interval, why. Improvement % is (ratio − 1) × 100, and so is its interval."""
    if criterion.kind == Criterion.Kind.ABSOLUTE:
        why = (
            f"there is no inference for {comparison.statistic}"
            if comparison.method == "none"
            else f"too few candidate observations for an interval of the {comparison.statistic}"
        )
        return comparison.candidate.value, comparison.candidate.ci, f"candidate {comparison.statistic}", why
    ratio, ratio_ci = comparison.relative_performance, comparison.relative_performance_ci
    if criterion.kind == Criterion.Kind.IMPROVEMENT:
        # A pair in, a pair out: mypy reads tuple() of a generator as a tuple of any length.
        ci = cast("tuple[float, float]", tuple((bound - 1) * 100 for bound in ratio_ci)) if ratio_ci else None
        return comparison.improvement_pct, ci, "improvement %", comparison.reason
    return ratio, ratio_ci, "relative performance", comparison.reason


def _window(comparison: Comparison, since: datetime | None, until: datetime) -> dict[str, str | None]:
    """The window read: from rollups, the whole days inside the criterion's window."""
    if comparison.approximate:
        since, until = comparison.since, comparison.until or until
    return {"since": since.isoformat() if since else None, "until": until.isoformat()}


def _evidence(
    comparison: Comparison,
    *,
    since: datetime | None,
    until: datetime,
    value_ci: tuple[float, float] | None,
) -> dict[str, Any]:
    """What the judgement read, as JSON: enough to answer "why did it pass or fail?" on its own."""

    def side(stats: _SideStats) -> dict[str, Any]:
        return {
            "system": stats.system,
            "n": stats.n,
            "value": stats.value,
            "ci": list(stats.ci) if stats.ci else None,
        }

    ratio_ci = comparison.relative_performance_ci
    return {
        "metric": comparison.metric,
        "unit": comparison.unit,
        "direction": comparison.direction,
        "statistic": comparison.statistic,
        "workload": comparison.workload,
        "window": _window(comparison, since, until),
        "method": comparison.method,
        "alpha": comparison.alpha,
        "baseline": side(comparison.baseline),
        "candidate": side(comparison.candidate),
        "relative_performance": comparison.relative_performance,
        "relative_performance_ci": list(ratio_ci) if ratio_ci else None,
        "improvement_pct": comparison.improvement_pct,
        "value_ci": list(value_ci) if value_ci else None,
        "p_value": comparison.p_value,
        "p_value_worse": comparison.p_value_worse,
        "null_ratio": comparison.null_ratio,
        "verdict": comparison.verdict,
        "reason": comparison.reason,
        "tags": comparison.tags,
        "warnings": comparison.warnings,
        "approximate": comparison.approximate,
        "accuracy": comparison.accuracy,
    }
