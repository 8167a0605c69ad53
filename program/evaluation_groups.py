"""A grouped criterion (`group_by`): it must hold in every group, so the worst group decides.

Each value of the group-by tag present on both sides is judged exactly as an ungrouped criterion is
judged (program.evaluation.comparison_judge). The criterion fails when any group fails, is
inconclusive when none fails but any is inconclusive (too few samples in a group is not a pass), and
passes only when every group passes. No group with data on both sides is inconclusive. Its value is
the deciding group's (the first failing or inconclusive one; when all pass, the one closest to the
threshold). The evidence keeps the pooled comparison and lists every group with its own numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from metrics.public import Comparison
from program.models import Criterion, CriterionResult

if TYPE_CHECKING:  # program.evaluation imports this module
    from program.evaluation import Judgement

Outcome = CriterionResult.Outcome
# Keyed by the outcome's text as a Judgement holds it (each Outcome is a str).
RANK: dict[str, int] = {Outcome.FAIL: 0, Outcome.INCONCLUSIVE: 1, Outcome.PASS: 2}


def _margin(criterion: Criterion, value: float | None) -> float:
    """How far a passing group's value clears the threshold: smaller is closer to failing."""
    if value is None or criterion.threshold is None:
        return float("inf")
    if criterion.operator in (Criterion.Operator.GTE, Criterion.Operator.GT):
        return value - criterion.threshold
    return criterion.threshold - value


def worst_group_of(
    criterion: Criterion, comparison: Comparison, judge: Callable[[Comparison], Judgement]
) -> tuple[str, float | None, str, list[dict[str, Any]], str | None]:
    """(outcome, value, reason, each group's evidence, the deciding group) of a grouped criterion;
    `judge` judges one group's comparison and returns a Judgement."""
    key = criterion.group_by
    judged = [(group.value, judge(group.comparison)) for group in comparison.groups]
    groups = [
        {
            "value": value,
            "outcome": j.outcome,
            "estimate": j.value,
            "reason": j.reason,
            "baseline_n": j.evidence.get("baseline", {}).get("n"),
            "candidate_n": j.evidence.get("candidate", {}).get("n"),
            "value_ci": j.evidence.get("value_ci"),
            "verdict": j.evidence.get("verdict"),
        }
        for value, j in judged
    ]
    if not judged:
        return Outcome.INCONCLUSIVE, None, f"no value of {key} has data on both sides.", groups, None
    worst_value, worst = min(
        judged, key=lambda item: (RANK[item[1].outcome], _margin(criterion, item[1].value))
    )
    passing = sum(1 for _, j in judged if j.outcome == Outcome.PASS)
    summary = f"{passing} of {len(judged)} groups of {key} pass"
    if comparison.groups_omitted:
        summary += f" ({comparison.groups_omitted} more groups were not judged)"
    reason = f"{summary}; worst, {key} = {worst_value}: {worst.reason}"
    return worst.outcome, worst.value, reason, groups, worst_value
