"""metrics.inference: the whole-distribution test and judging a criterion's threshold (judge,
judge_shift) from an estimate, its interval or the one-sided tests."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from metrics.inference import infer, judge, judge_shift, verdict
from tests.metrics.inference_samples import HIGHER, LOWER, sorted_sample


def test_distribution_verdict_follows_the_one_sided_tests():
    base = sorted_sample(4, 500)
    slower = np.sort(base * 1.2)
    assert (
        verdict(
            infer(statistic="distribution", direction=LOWER, baseline=base, candidate=slower), min_samples=30
        )
        == "worse"
    )
    assert (
        verdict(
            infer(statistic="distribution", direction=HIGHER, baseline=base, candidate=slower), min_samples=30
        )
        == "better"
    )
    same = infer(statistic="distribution", direction=HIGHER, baseline=base, candidate=base)
    assert verdict(same, min_samples=30) == "no_difference"


@pytest.mark.parametrize(
    ("direction", "moved", "better", "worse"),
    [(HIGHER, lambda b: b * 0.8, "greater", "less"), (LOWER, lambda b: b / 0.8, "less", "greater")],
)
def test_distribution_null_ratio_tests_against_the_baseline_moved_toward_better(
    pair, direction, moved, better, worse
):
    base, cand = pair
    result = infer(
        statistic="distribution", direction=direction, baseline=base, candidate=cand, null_ratio=0.8
    )
    assert result.p_value == pytest.approx(stats.mannwhitneyu(cand, moved(base), alternative=better).pvalue)
    assert result.p_value_worse == pytest.approx(
        stats.mannwhitneyu(cand, moved(base), alternative=worse).pvalue
    )
    unmoved = infer(statistic="distribution", direction=direction, baseline=base, candidate=cand)
    assert result.relative_performance == unmoved.relative_performance  # the median ratio is the estimate
    assert result.null_ratio == 0.8


@pytest.mark.parametrize("null_ratio", [0.0, -1.0, math.inf, math.nan])
def test_distribution_null_ratio_must_be_positive_and_finite(pair, null_ratio):
    with pytest.raises(ValueError, match="null_ratio"):
        infer(
            statistic="distribution",
            direction=HIGHER,
            baseline=pair[0],
            candidate=pair[1],
            null_ratio=null_ratio,
        )


@pytest.mark.parametrize(
    ("operator", "p_better", "p_worse", "outcome"),
    [
        (">=", 0.0249, 0.9, "pass"),
        (">=", 0.025, 0.9, "inconclusive"),  # α/2 exactly does not reject
        (">=", 0.9, 0.025, "inconclusive"),
        (">=", 0.9, 0.0249, "fail"),
        (">", 0.01, 0.99, "pass"),
        ("<=", 0.9, 0.0249, "pass"),
        ("<=", 0.0249, 0.9, "fail"),
        ("<", 0.3, 0.3, "inconclusive"),
    ],
)
def test_judge_shift_with_significance_takes_the_one_sided_tests_at_half_alpha(
    operator, p_better, p_worse, outcome
):
    result, why = judge_shift(
        estimate=1.2,
        p_better=p_better,
        p_worse=p_worse,
        alpha=0.05,
        operator=operator,
        threshold=1.0,
        require_significant=True,
    )
    assert result == outcome
    assert why.startswith("median ratio 1.2 ") and "Mann–Whitney against the baseline moved by 1×" in why


@pytest.mark.parametrize(
    ("estimate", "outcome", "words"),
    [(0.8, "pass", "0.8 ≥ 0.8 holds."), (0.7999, "fail", "0.7999 ≥ 0.8 does not hold.")],
)
def test_judge_shift_without_significance_takes_the_median_ratio(estimate, outcome, words):
    result, why = judge_shift(
        estimate=estimate,
        p_better=0.9,
        p_worse=0.0,
        alpha=0.05,
        operator="gte",
        threshold=0.8,
        require_significant=False,
    )
    assert (result, why) == (outcome, f"median ratio {words}")


def test_judge_shift_without_a_test_is_inconclusive_and_says_why():
    result, why = judge_shift(
        estimate=1.1,
        p_better=None,
        p_worse=None,
        alpha=0.05,
        operator=">=",
        threshold=1.0,
        require_significant=True,
        no_test_reason="a side has no observations.",
    )
    assert (result, why) == (
        "inconclusive",
        "significance required but there is no test: a side has no observations.",
    )


def test_distribution_criterion_false_passes_at_most_half_alpha_in_a_and_a():
    """A/A, 400 pairs of n = 300: "relative ≥ 1, significant" must pass no more often than α/2 allows
    (binomial 99.9 % upper limit of 0.025 over 400 trials is about 0.05)."""
    rng = np.random.default_rng(7)
    passes = 0
    for _ in range(400):
        base, cand = np.sort(rng.lognormal(5, 0.6, (2, 300)), axis=1)
        result = infer(statistic="distribution", direction=HIGHER, baseline=base, candidate=cand)
        outcome, _ = judge_shift(
            estimate=result.relative_performance,
            p_better=result.p_value,
            p_worse=result.p_value_worse,
            alpha=0.05,
            operator=">=",
            threshold=1.0,
            require_significant=True,
        )
        passes += outcome == "pass"
    assert passes / 400 <= stats.binom.ppf(0.999, 400, 0.025) / 400


@pytest.mark.parametrize(
    ("operator", "ci", "outcome"),
    [
        (">=", (1.0, 1.2), "pass"),  # lower bound exactly at the threshold
        (">=", (1.0001, 1.2), "pass"),
        (">=", (0.9999, 1.2), "inconclusive"),
        (">=", (0.8, 1.0), "inconclusive"),  # upper bound exactly at the threshold
        (">=", (0.8, 0.9999), "fail"),
        (">", (1.0, 1.2), "inconclusive"),
        (">", (1.0001, 1.2), "pass"),
        (">", (0.8, 1.0), "fail"),
        (">", (0.8, 1.0001), "inconclusive"),
        ("<=", (0.8, 1.0), "pass"),
        ("<=", (0.8, 1.0001), "inconclusive"),
        ("<=", (1.0, 1.2), "inconclusive"),
        ("<=", (1.0001, 1.2), "fail"),
        ("<", (0.8, 1.0), "inconclusive"),
        ("<", (0.8, 0.9999), "pass"),
        ("<", (1.0, 1.2), "fail"),
        ("<", (0.9999, 1.2), "inconclusive"),
    ],
)
def test_judge_with_significance_takes_the_interval_bounds(operator, ci, outcome):
    estimate = sum(ci) / 2
    assert (
        judge(estimate=estimate, ci=ci, operator=operator, threshold=1.0, require_significant=True)[0]
        == outcome
    )


@pytest.mark.parametrize(
    ("operator", "estimate", "outcome"),
    [
        (">=", 1.0, "pass"),
        (">=", 0.9999, "fail"),
        (">", 1.0, "fail"),
        (">", 1.0001, "pass"),
        ("<=", 1.0, "pass"),
        ("<=", 1.0001, "fail"),
        ("<", 1.0, "fail"),
        ("<", 0.9999, "pass"),
    ],
)
def test_judge_without_significance_takes_the_point_estimate(operator, estimate, outcome):
    # The interval straddles the threshold, yet the point estimate decides; the interval is still reported.
    result, reason = judge(
        estimate=estimate, ci=(0.5, 1.5), operator=operator, threshold=1.0, require_significant=False
    )
    assert result == outcome
    assert "interval 0.5 – 1.5" in reason


def test_judge_accepts_the_model_operator_names():
    assert (
        judge(estimate=1.1, ci=(1.05, 1.2), operator="gte", threshold=1.0, require_significant=True)[0]
        == "pass"
    )
    assert (
        judge(estimate=1.1, ci=(1.05, 1.2), operator="lt", threshold=1.0, require_significant=True)[0]
        == "fail"
    )


def test_judge_requiring_significance_without_interval_is_inconclusive_and_says_why(pair):
    base, cand = pair
    result = infer(statistic="max", direction=HIGHER, baseline=base, candidate=cand)
    outcome, reason = judge(
        estimate=result.relative_performance,
        ci=result.relative_performance_ci,
        operator=">=",
        threshold=0.5,
        require_significant=True,
        no_interval_reason=result.reason,
    )
    assert outcome == "inconclusive"
    assert "no interval" in reason and "no inference for max" in reason
    assert (
        judge(estimate=None, ci=None, operator=">=", threshold=1, require_significant=False)[0]
        == "inconclusive"
    )
