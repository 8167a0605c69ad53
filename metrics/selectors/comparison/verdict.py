"""The comparison's judgement from the two sides' numbers and the test's p-value.

Pure (no database, no samples), so every branch is tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    relative_performance: float | None
    change_pct: float | None
    improvement_pct: float | None
    significant: bool
    verdict: str
    reason: str


def comparison_verdict(
    *,
    statistic: str,
    higher_is_better: bool,
    baseline_n: int,
    candidate_n: int,
    baseline_value: float | None,
    candidate_value: float | None,
    p_value: float | None,
    alpha: float,
    min_samples: int,
) -> Verdict:
    """`relative_performance` > 1 means the candidate is better, whichever way the metric points."""
    relative = change = improvement = None
    if baseline_value is not None and candidate_value is not None:
        if baseline_value != 0:
            change = (candidate_value - baseline_value) / abs(baseline_value) * 100
        if higher_is_better and baseline_value > 0:
            relative = candidate_value / baseline_value
        elif not higher_is_better and candidate_value > 0:
            relative = baseline_value / candidate_value
        if relative is not None:
            improvement = (relative - 1) * 100

    significant = p_value is not None and p_value < alpha
    if baseline_n < min_samples or candidate_n < min_samples:
        verdict = "insufficient_data"
        reason = (
            f"needs at least {min_samples} observations on each side "
            f"(baseline {baseline_n}, candidate {candidate_n})."
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
    return Verdict(relative, change, improvement, significant, verdict, reason)
