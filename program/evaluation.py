"""Judging one criterion from the metrics comparison: pass | fail | inconclusive, with the numbers."""

from __future__ import annotations

import operator as op
from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from metrics.models import System
from metrics.selectors import comparison_compute
from program.models import Criterion, CriterionResult

OPERATORS = {"gte": op.ge, "gt": op.gt, "lte": op.le, "lt": op.lt}
SYMBOLS = dict(Criterion.Operator.choices)
Outcome = CriterionResult.Outcome


@dataclass
class Judgement:
    outcome: str
    reason: str
    value: float | None = None
    evidence: dict = field(default_factory=dict)


def criterion_judge(criterion: Criterion, *, baseline: System, candidate: System) -> Judgement:
    if criterion.kind == Criterion.Kind.MANUAL:
        if criterion.attested_at:
            who = criterion.attested_by.get_username() if criterion.attested_by else "someone"
            return Judgement(
                Outcome.PASS,
                f"attested by {who} on {criterion.attested_at:%d %b %Y}.",
                evidence={"link": criterion.attestation_link},
            )
        return Judgement(Outcome.INCONCLUSIVE, "not attested yet.")

    since = timezone.now() - timedelta(days=criterion.window_days) if criterion.window_days else None
    comparison = comparison_compute(
        definition=criterion.metric,
        baseline=baseline,
        candidate=candidate,
        workload=criterion.workload,
        since=since,
        statistic=criterion.statistic or None,
        min_samples=criterion.min_samples,
    )
    evidence = {
        "metric": comparison.metric,
        "unit": comparison.unit,
        "statistic": comparison.statistic,
        "workload": comparison.workload,
        "baseline": {
            "system": baseline.key,
            "n": comparison.baseline.n,
            "value": comparison.baseline.statistic(comparison.statistic),
        },
        "candidate": {
            "system": candidate.key,
            "n": comparison.candidate.n,
            "value": comparison.candidate.statistic(comparison.statistic),
        },
        "relative_performance": comparison.relative_performance,
        "improvement_pct": comparison.improvement_pct,
        "p_value": comparison.p_value,
        "verdict": comparison.verdict,
    }
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
    value = {
        Criterion.Kind.RELATIVE: comparison.relative_performance,
        Criterion.Kind.IMPROVEMENT: comparison.improvement_pct,
        Criterion.Kind.ABSOLUTE: comparison.candidate.statistic(comparison.statistic),
    }[criterion.kind]
    if value is None:
        return Judgement(Outcome.INCONCLUSIVE, "no baseline value to compare with.", evidence=evidence)
    label = {
        "relative": "relative performance",
        "improvement": "improvement %",
        "absolute": f"candidate {comparison.statistic}",
    }[criterion.kind]
    holds = OPERATORS[criterion.operator](value, criterion.threshold)
    statement = f"{label} {value:.4g} {SYMBOLS[criterion.operator]} {criterion.threshold:g}"
    if not holds:
        return Judgement(Outcome.FAIL, f"{statement} does not hold.", value, evidence)
    if criterion.require_significant and comparison.verdict != "better":
        return Judgement(
            Outcome.FAIL if comparison.verdict == "worse" else Outcome.INCONCLUSIVE,
            f"{statement} holds but the difference is not significantly better ({comparison.reason})",
            value,
            evidence,
        )
    return Judgement(Outcome.PASS, f"{statement} holds.", value, evidence)
