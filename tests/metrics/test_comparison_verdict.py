"""comparison_verdict: the comparison's judgement from the two sides' numbers, without a database."""

from __future__ import annotations

import pytest

from metrics.selectors.comparison import comparison_verdict


def judge(**overrides):
    numbers = {
        "statistic": "p95",
        "higher_is_better": False,
        "baseline_n": 100,
        "candidate_n": 100,
        "baseline_value": 2.0,
        "candidate_value": 1.0,
        "p_value": 1e-4,
        "alpha": 0.05,
        "min_samples": 30,
    }
    return comparison_verdict(**{**numbers, **overrides})


def test_lower_is_better_a_lower_candidate_is_better():
    result = judge(higher_is_better=False, baseline_value=2.0, candidate_value=1.0)
    assert result.relative_performance == pytest.approx(2.0)  # baseline / candidate
    assert result.change_pct == pytest.approx(-50.0)  # the value halved …
    assert result.improvement_pct == pytest.approx(100.0)  # … which is twice as good
    assert (result.significant, result.verdict) == (True, "better")
    assert result.reason == "candidate p95 is 2.000× the baseline's (p = 0.0001)."


def test_lower_is_better_a_higher_candidate_is_worse():
    result = judge(higher_is_better=False, baseline_value=1.0, candidate_value=1.25)
    assert result.relative_performance == pytest.approx(0.8)
    assert result.change_pct == pytest.approx(25.0)
    assert result.improvement_pct == pytest.approx(-20.0)
    assert result.verdict == "worse"
    assert result.reason == "candidate reaches 0.800× of the baseline (p = 0.0001)."


def test_higher_is_better_ratio_is_candidate_over_baseline():
    better = judge(higher_is_better=True, baseline_value=100.0, candidate_value=125.0)
    assert better.relative_performance == pytest.approx(1.25)
    assert better.change_pct == pytest.approx(25.0) and better.improvement_pct == pytest.approx(25.0)
    assert better.verdict == "better"
    worse = judge(higher_is_better=True, baseline_value=100.0, candidate_value=70.0)
    assert worse.relative_performance == pytest.approx(0.7)
    assert worse.verdict == "worse"


def test_not_significant_is_no_difference_whatever_the_ratio():
    result = judge(p_value=0.05, alpha=0.05)  # p must be below α
    assert result.relative_performance == pytest.approx(2.0)
    assert (result.significant, result.verdict) == (False, "no_difference")
    assert result.reason == "p = 0.05 ≥ α = 0.05: the difference is not significant."


@pytest.mark.parametrize(("baseline_n", "candidate_n"), [(29, 100), (100, 29), (0, 0)])
def test_too_few_samples_on_either_side_is_insufficient_data(baseline_n, candidate_n):
    result = judge(baseline_n=baseline_n, candidate_n=candidate_n)
    assert result.verdict == "insufficient_data"
    assert result.reason == (
        f"needs at least 30 observations on each side (baseline {baseline_n}, candidate {candidate_n})."
    )


def test_insufficient_samples_wins_over_a_significant_p_value():
    assert judge(baseline_n=10, p_value=1e-12).verdict == "insufficient_data"


def test_no_baseline_forms_no_ratio():
    result = judge(baseline_n=0, baseline_value=None, p_value=None, min_samples=0)
    assert (result.relative_performance, result.change_pct, result.improvement_pct) == (None, None, None)
    assert result.verdict == "insufficient_data"


@pytest.mark.parametrize(
    ("higher_is_better", "baseline_value", "candidate_value"),
    [(True, 0.0, 5.0), (False, 5.0, 0.0)],  # the ratio's denominator is zero
)
def test_zero_denominator_forms_no_ratio(higher_is_better, baseline_value, candidate_value):
    result = judge(
        higher_is_better=higher_is_better, baseline_value=baseline_value, candidate_value=candidate_value
    )
    assert result.relative_performance is None and result.improvement_pct is None
    assert result.verdict == "insufficient_data"


def test_change_is_relative_to_the_baseline_magnitude():
    result = judge(higher_is_better=True, baseline_value=-4.0, candidate_value=-2.0)
    assert result.change_pct == pytest.approx(50.0)
    assert result.relative_performance is None  # no ratio against a non-positive baseline
