"""Every metric at least as good ("fully surpasses"): the `every_metric` criterion.

Which metrics count: every *active* metric definition with observations on both the program's
baseline and candidate systems, for the criterion's workload (none: every workload, pooled, as for
the other kinds) and window, less the keys the criterion excludes (each with its reason). A metric
with data on one side only is not compared but named in the evidence (`not_compared`).

What "at least as good" means: non-inferiority, each metric by its own direction and statistic
(the definition's default) and that statistic's own interval for the relative performance
(metrics.inference). With threshold t (1.0: no margin; 0.95: at most 5 % worse) a metric passes when
the lower bound of its (1 − α) interval is ≥ t, exactly as a `relative` criterion with
require_significant judges one metric. Too few samples, or a statistic without an interval (min,
max), is inconclusive and named: it never passes silently.

Many metrics at once (`method` in the evidence says so):
- Passing is an intersection–union test: the criterion passes only when every metric passes at α on
  its own. Demanding all of them is stricter than any one, so the AND needs no multiplicity
  correction; its false-pass rate is at most that of a single metric's test.
- Failing is "some metric is worse than t", a union of K tests, which would cry regression far too
  often if each ran at α. Holm's step-down controls that family-wise: with m metrics not yet shown
  worse, those whose interval at α/m lies wholly below t are shown worse, and the step repeats with
  the fewer left. A metric worse at α on its own but not after the correction is inconclusive, and its
  reason says so. (Holm's level is on the same scale as one criterion's fail: the upper bound of the
  two-sided interval, so one-sided α/2 for the family.)

The criterion fails when any metric is shown worse, passes when every compared metric passes (and
there is at least one), and is inconclusive otherwise. Its value is the deciding metric's relative
performance: the first failing, else the first inconclusive, else the one closest to the threshold.

Queries: one for the metrics with data, and the batch read of every compared metric's samples
(metrics.public.sides_fetch_many, at most three queries), whatever the number of metrics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from metrics.models import MetricDefinition, System
from metrics.public import (
    Comparison,
    Side,
    SidesRequest,
    Window,
    comparison_of_sides,
    judge,
    rollup_summaries,
    series_present,
    sides_fetch_many,
)
from program.models import Criterion, CriterionResult

Outcome = CriterionResult.Outcome
METHOD = "intersection-union+holm"
ALPHA = 0.05
RANK: dict[str, int] = {Outcome.FAIL: 0, Outcome.INCONCLUSIVE: 1, Outcome.PASS: 2}


@dataclass(frozen=True)
class Tracked:
    """An active definition with observations on at least one of the two systems."""

    definition: MetricDefinition
    on_baseline: bool
    on_candidate: bool


def tracked_metrics(
    criterion: Criterion, *, baseline: System, candidate: System, since: datetime | None
) -> list[Tracked]:
    """Active definitions with data on either side for the criterion's workload and window, by key
    (two queries: the active definitions, then an index probe per definition and side)."""
    definitions = list(MetricDefinition.objects.filter(status=MetricDefinition.Status.ACTIVE).order_by("key"))
    present = series_present(
        [d.pk for d in definitions],
        system_ids=[baseline.pk, candidate.pk],
        workload_id=criterion.workload_id,
        since=since,
    )
    tracked = [
        Tracked(d, (d.pk, baseline.pk) in present, (d.pk, candidate.pk) in present) for d in definitions
    ]
    return [t for t in tracked if t.on_baseline or t.on_candidate]


def every_metric_inputs(
    criterion: Criterion, *, baseline_id: int, candidate_id: int, since: datetime | None
) -> list[Any]:
    """What an every-metric judgement depends on, for the evaluation's fingerprint: per active
    definition, its statistic and direction, and per side the rows, sum and last refresh of its day
    rollups over the window's whole days (metrics.public.rollup_summaries: two queries, on the
    definitions and the rollups). Not the rows: a count over every metric's rows was a whole-table
    scan on each evaluation (0.5 s CPU at 1M rows). A batch shows here once its rollups are
    refreshed, and that refresh evaluates the gate again (program.receivers). A new active version
    is a new definition row, so it changes this too."""
    definitions = list(
        MetricDefinition.objects.filter(status=MetricDefinition.Status.ACTIVE)
        .order_by("pk")
        .values_list("pk", "statistic", "direction")
    )
    windows = [Window(pk, criterion.workload_id, since) for pk, _, _ in definitions]
    summaries = rollup_summaries(windows, baseline_id=baseline_id, candidate_id=candidate_id)
    return [
        [pk, statistic, direction, sorted(summary.items())]
        for (pk, statistic, direction), summary in zip(definitions, summaries, strict=True)
        if summary
    ]


def combined_outcome(outcomes: Sequence[str]) -> str:
    """The criterion's outcome from its metrics': intersection–union for the pass (every one passes),
    any failing one (shown worse after Holm) fails it, anything else is inconclusive. None at all is
    inconclusive."""
    if not outcomes:
        return Outcome.INCONCLUSIVE
    return min(outcomes, key=RANK.__getitem__)


def holm_regressions(
    worse_at: Sequence[Callable[[float], bool]], *, alpha: float = ALPHA
) -> dict[int, float]:
    """Holm's step-down over the metrics' "worse than the threshold" tests: index → the level at which
    it was shown worse. `worse_at[i](a)` says whether metric i's (1 − a) interval lies wholly on the
    wrong side of the threshold. With m not yet rejected, every one worse at α/m is rejected at once
    (each would be rejected in turn by the sorted-p-value form, whose thresholds only grow), then the
    step repeats; it stops when a step rejects none."""
    rejected: dict[int, float] = {}
    while len(rejected) < len(worse_at):
        level = alpha / (len(worse_at) - len(rejected))
        newly = [i for i, worse in enumerate(worse_at) if i not in rejected and worse(level)]
        if not newly:
            break
        rejected.update(dict.fromkeys(newly, level))
    return rejected


@dataclass
class _Metric:
    definition: MetricDefinition
    sides: tuple[Side, Side]
    comparison: Comparison
    outcome: str
    reason: str
    tested: bool  # enough samples and an interval: one of the Holm family


def _one(criterion: Criterion, threshold: float, comparison: Comparison) -> tuple[str, str, bool]:
    """One metric at its comparison's α on its own: outcome, reason, and whether it was tested at all."""
    base_n, cand_n = comparison.baseline.n, comparison.candidate.n
    if min(base_n, cand_n) < criterion.min_samples:
        why = f"too few samples: baseline {base_n}, candidate {cand_n}, need {criterion.min_samples}."
        return Outcome.INCONCLUSIVE, why, False
    outcome, why = judge(
        estimate=comparison.relative_performance,
        ci=comparison.relative_performance_ci,
        operator=criterion.operator,
        threshold=threshold,
        require_significant=True,
        no_interval_reason=comparison.reason or f"there is no interval for the {comparison.statistic}",
    )
    return (
        outcome,
        f"{comparison.statistic} relative performance: {why}",
        comparison.relative_performance_ci is not None,
    )


def _margin(threshold: float, metric: _Metric) -> float:
    """How far a metric's lower bound clears the threshold: smaller is closer to failing."""
    ci = metric.comparison.relative_performance_ci
    return ci[0] - threshold if ci else float("inf")


def _side(stats: Any) -> dict[str, Any]:
    return {
        "system": stats.system,
        "n": stats.n,
        "value": stats.value,
        "ci": list(stats.ci) if stats.ci else None,
    }


def _row(metric: _Metric, holm_level: float | None) -> dict[str, Any]:
    c = metric.comparison
    return {
        "metric": metric.definition.ref,
        "name": metric.definition.name,
        "unit": c.unit,
        "direction": c.direction,
        "statistic": c.statistic,
        "method": c.method,
        "outcome": metric.outcome,
        "reason": metric.reason,
        "baseline": _side(c.baseline),
        "candidate": _side(c.candidate),
        "relative_performance": c.relative_performance,
        "relative_performance_ci": list(c.relative_performance_ci) if c.relative_performance_ci else None,
        "holm_level": holm_level,
        "approximate": c.approximate,
    }


def every_metric_judge(
    criterion: Criterion,
    *,
    baseline: System,
    candidate: System,
    since: datetime | None,
    until: datetime,
) -> tuple[str, str, float | None, dict[str, Any]]:
    """(outcome, reason, value, evidence) of an every-metric criterion (program.evaluation wraps it)."""
    threshold = criterion.threshold
    if threshold is None:  # the services and a database constraint refuse one without
        return Outcome.INCONCLUSIVE, "needs a threshold.", None, {}
    excluded = {e["metric"]: e["reason"] for e in criterion.excluded_metrics or []}
    tracked = tracked_metrics(criterion, baseline=baseline, candidate=candidate, since=since)
    compared = [
        t.definition for t in tracked if t.on_baseline and t.on_candidate and t.definition.key not in excluded
    ]
    not_compared = [
        {"metric": t.definition.ref, "missing": "candidate" if t.on_baseline else "baseline"}
        for t in tracked
        if not (t.on_baseline and t.on_candidate) and t.definition.key not in excluded
    ]
    sides = sides_fetch_many(
        [SidesRequest(definition_id=d.pk, workload_id=criterion.workload_id, since=since) for d in compared],
        baseline=baseline,
        candidate=candidate,
    )

    def compare(definition: MetricDefinition, pair: tuple[Side, Side], alpha: float) -> Comparison:
        return comparison_of_sides(
            definition=definition,
            sides=pair,
            workload=criterion.workload,
            since=since,
            until=until,
            alpha=alpha,
            min_samples=criterion.min_samples,
        )

    metrics = []
    for definition, found in zip(compared, sides, strict=True):
        pair = cast("tuple[Side, Side]", found)  # a request without tag filters is answered with a pair
        comparison = compare(definition, pair, ALPHA)
        metrics.append(_Metric(definition, pair, comparison, *_one(criterion, threshold, comparison)))

    # Holm's family: the metrics actually tested. Only one worse at α can be worse at α/m (the
    # intervals only widen as the level falls), so the others are never recompared.
    family = [m for m in metrics if m.tested]

    def worse_at(metric: _Metric) -> Callable[[float], bool]:
        def worse(level: float) -> bool:
            if metric.outcome != Outcome.FAIL:
                return False
            return (
                _one(criterion, threshold, compare(metric.definition, metric.sides, level))[0] == Outcome.FAIL
            )

        return worse

    holm = holm_regressions([worse_at(m) for m in family], alpha=ALPHA)
    levels: dict[int, float] = {}
    for index, metric in enumerate(family):
        if metric.outcome != Outcome.FAIL:
            continue
        if index in holm:
            levels[id(metric)] = holm[index]
            metric.reason += (
                f" Worse after Holm's correction for {len(family)} metrics (at α = {holm[index]:.3g})."
            )
        else:
            metric.outcome = Outcome.INCONCLUSIVE
            metric.reason += f" Worse at α = {ALPHA:g} on its own, but not after Holm's correction for {len(family)} metrics."

    evidence: dict[str, Any] = {
        "method": METHOD,
        "alpha": ALPHA,
        "operator": criterion.operator,
        "threshold": threshold,
        "workload": criterion.workload.key if criterion.workload else None,
        "window": {"since": since.isoformat() if since else None, "until": until.isoformat()},
        "metrics": [_row(m, levels.get(id(m))) for m in metrics],
        "excluded": [{"metric": key, "reason": reason} for key, reason in excluded.items()],
        "not_compared": not_compared,
    }
    if not metrics:
        return Outcome.INCONCLUSIVE, "no active metric has data on both systems to compare.", None, evidence
    worst = min(metrics, key=lambda m: (RANK[m.outcome], _margin(threshold, m)))
    evidence["deciding_metric"] = worst.definition.ref
    counts = {o: sum(1 for m in metrics if m.outcome == o) for o in Outcome.values}
    evidence["counts"] = counts
    summary = f"{counts[Outcome.PASS]} of {len(metrics)} metrics at least as good"
    named = [
        f"{label}: {', '.join(m.definition.ref for m in metrics if m.outcome == outcome)}"
        for outcome, label in ((Outcome.FAIL, "worse"), (Outcome.INCONCLUSIVE, "inconclusive"))
        if counts[outcome]
    ]
    reason = f"{summary}{' (' + '; '.join(named) + ')' if named else ''}; deciding, {worst.definition.ref}: {worst.reason}"
    outcome = combined_outcome([m.outcome for m in metrics])
    return outcome, reason, worst.comparison.relative_performance, evidence
