"""comparison_verdict: the comparison's judgement from its inference, without a database."""

from __future__ import annotations

import pytest

from metrics.inference import Inference, SideEstimate
from metrics.selectors.comparison import comparison_verdict


def inference(**overrides):
    fields = {
        "statistic": "p95",
        "method": "order-statistic",
        "alpha": 0.05,
        "baseline": SideEstimate(100, 2.0, (1.8, 2.2)),
        "candidate": SideEstimate(100, 1.0, (0.9, 1.1)),
        "relative_performance": 2.0,  # lower is better: baseline / candidate
        "relative_performance_ci": (1.7, 2.4),
        "p_value": 1e-4,
        "reason": "",
    }
    return Inference(**{**fields, **overrides})


def judge(min_samples=30, **overrides):
    return comparison_verdict(inference=inference(**overrides), min_samples=min_samples)


def test_lower_is_better_a_lower_candidate_is_better():
    result = judge()
    assert result.change_pct == pytest.approx(-50.0)  # the value halved …
    assert result.improvement_pct == pytest.approx(100.0)  # … which is twice as good
    assert result.verdict == "better"
    assert result.reason == (
        "the 95% interval of relative performance, 1.7 – 2.4, lies above 1: the candidate's p95 is better."
    )


def test_an_interval_below_one_is_worse():
    result = judge(
        candidate=SideEstimate(100, 2.5, (2.3, 2.7)),
        relative_performance=0.8,
        relative_performance_ci=(0.7, 0.9),
        p_value=0.9999,
    )
    assert result.change_pct == pytest.approx(25.0)
    assert result.improvement_pct == pytest.approx(-20.0)
    assert result.verdict == "worse"
    assert "0.7 – 0.9, lies below 1" in result.reason


def test_an_interval_containing_one_is_no_difference_whatever_the_point_ratio():
    result = judge(relative_performance_ci=(0.99, 4.0))
    assert result.improvement_pct == pytest.approx(100.0)
    assert result.verdict == "no_difference"
    assert result.reason.endswith("contains 1: no difference in p95 is shown.")


@pytest.mark.parametrize(("baseline_n", "candidate_n"), [(29, 100), (100, 29), (0, 0)])
def test_too_few_samples_on_either_side_is_insufficient_data(baseline_n, candidate_n):
    result = judge(
        baseline=SideEstimate(baseline_n, 2.0, (1.8, 2.2)),
        candidate=SideEstimate(candidate_n, 1.0, (0.9, 1.1)),
    )
    assert result.verdict == "insufficient_data"
    assert result.reason == (
        f"needs at least 30 observations on each side (baseline {baseline_n}, candidate {candidate_n})."
    )


def test_no_interval_is_insufficient_data_and_says_why():
    result = judge(relative_performance_ci=None, p_value=None, reason="too few observations for p99.")
    assert (result.verdict, result.reason) == ("insufficient_data", "too few observations for p99.")


def test_no_baseline_forms_no_ratio():
    result = judge(
        min_samples=0,
        baseline=SideEstimate(0, None, None),
        relative_performance=None,
        relative_performance_ci=None,
        p_value=None,
        reason="a side has no observations.",
    )
    assert (result.change_pct, result.improvement_pct) == (None, None)
    assert result.verdict == "insufficient_data"


def test_change_is_relative_to_the_baseline_magnitude():
    result = judge(
        baseline=SideEstimate(100, -4.0, None),
        candidate=SideEstimate(100, -2.0, None),
        relative_performance=None,
        relative_performance_ci=None,
    )
    assert result.change_pct == pytest.approx(50.0)
    assert result.improvement_pct is None


@pytest.mark.parametrize(
    ("p_better", "p_worse", "expected"),
    [(0.001, 0.999, "better"), (0.999, 0.001, "worse"), (0.03, 0.97, "no_difference")],
)
def test_distribution_uses_two_one_sided_mann_whitney_tests_at_half_alpha(p_better, p_worse, expected):
    result = judge(
        statistic="distribution",
        method="mann-whitney",
        relative_performance_ci=None,
        p_value=p_better,
        p_value_worse=p_worse,
    )
    assert result.verdict == expected
    assert result.reason.startswith("Mann–Whitney, one-sided")


def test_a_tiny_p_value_is_written_as_a_bound():
    result = judge(statistic="distribution", relative_performance_ci=None, p_value=2e-101, p_value_worse=1.0)
    assert (
        result.reason == "Mann–Whitney, one-sided: candidate values are better (p < 1e-6, below α/2 = 0.025)."
    )
