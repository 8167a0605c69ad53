"""The comparison's judgement from its inference: the verdict, the derived percentages and why.

Pure (no database, no samples), so every branch is tested on its own. The verdict itself is
`metrics.inference.verdict` (the interval of relative performance against 1; the one-sided
Mann–Whitney tests for `distribution`); this adds the numbers and words around it.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.numbers import p_statement
from metrics.inference import Inference, verdict


@dataclass(frozen=True)
class Verdict:
    change_pct: float | None
    improvement_pct: float | None
    verdict: str
    reason: str


def comparison_verdict(*, inference: Inference, min_samples: int) -> Verdict:
    """`change_pct` is how the candidate's value moved; `improvement_pct` how much better it is (> 0)."""
    base, cand = inference.baseline.value, inference.candidate.value
    change = None
    if base is not None and cand is not None and base != 0:
        change = (cand - base) / abs(base) * 100
    ratio = inference.relative_performance
    improvement = (ratio - 1) * 100 if ratio is not None else None
    outcome = verdict(inference, min_samples=min_samples)
    return Verdict(change, improvement, outcome, _reason(inference, outcome, min_samples))


def _reason(inference: Inference, outcome: str, min_samples: int) -> str:
    name, alpha = inference.statistic, inference.alpha
    if min(inference.baseline.n, inference.candidate.n) < min_samples:
        return (
            f"needs at least {min_samples} observations on each side "
            f"(baseline {inference.baseline.n}, candidate {inference.candidate.n})."
        )
    if name == "distribution":
        if inference.undecided:
            return (
                "Mann–Whitney from the buckets: values within a bucket may lie either way, so the test "
                "cannot tell this shift at the buckets' accuracy."
            )
        if outcome == "insufficient_data":
            return inference.reason
        p_better, p_worse = inference.p_value, inference.p_value_worse
        if p_better is None or p_worse is None:  # only where a side is empty: insufficient data
            return inference.reason
        # A criterion's threshold moves the tests: "better" is then "better than t× the baseline".
        than = "" if inference.null_ratio == 1 else f" than {inference.null_ratio:g}× the baseline"
        if outcome == "better":
            return f"Mann–Whitney, one-sided: candidate values are better{than} ({p_statement(p_better)}, below α/2 = {alpha / 2:g})."
        if outcome == "worse":
            return f"Mann–Whitney, one-sided: candidate values are worse{than} ({p_statement(p_worse)}, below α/2 = {alpha / 2:g})."
        return (
            f"Mann–Whitney, one-sided: no shift{than} either way at α/2 = {alpha / 2:g} "
            f"(better: {p_statement(p_better)}, worse: {p_statement(p_worse)})."
        )
    ci = inference.relative_performance_ci
    if ci is None:
        return inference.reason
    interval = f"the {1 - alpha:.0%} interval of relative performance, {ci[0]:.3g} – {ci[1]:.3g},"
    if inference.undecided:
        return (
            f"{interval} read to the buckets' edges, contains 1, but the exact one might not: the "
            f"difference in {name} is finer than the buckets can tell."
        )
    if outcome == "better":
        return f"{interval} lies above 1: the candidate's {name} is better."
    if outcome == "worse":
        return f"{interval} lies below 1: the candidate's {name} is worse."
    return f"{interval} contains 1: no difference in {name} is shown."
