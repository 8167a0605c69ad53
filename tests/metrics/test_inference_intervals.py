"""metrics.inference: each statistic's intervals, p-values and verdict, against independent references
computed on the same data (scipy's quantile intervals and tests, the bootstrap).

Tolerances: a ratio interval's bounds are compared with scipy.stats.bootstrap (9,999 percentile
resamples, fixed seed) on the log scale, as a share of the bootstrap interval's log width — within
15 % for quantiles (the order-statistic interval is exact-or-conservative and discrete, the bootstrap
is neither) and 3 % for means.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from metrics.inference import infer, judge, order_statistic_ranks, verdict
from tests.metrics.inference_samples import HIGHER, LOWER, sorted_sample

QUANTILE = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}


def bootstrap_ratio(base, cand, summary, direction):
    def ratio(b, c, axis):
        num, den = (
            (summary(c, axis), summary(b, axis))
            if direction == HIGHER
            else (summary(b, axis), summary(c, axis))
        )
        return num / den

    result = stats.bootstrap(
        (base, cand), ratio, n_resamples=9999, method="percentile", rng=np.random.default_rng(0), batch=500
    )
    return result.confidence_interval.low, result.confidence_interval.high


def assert_close_on_log_scale(ours, reference, share):
    width = math.log(reference[1] / reference[0])
    for mine, theirs in zip(ours, reference, strict=True):
        assert abs(math.log(mine / theirs)) <= share * width, (ours, reference)


@pytest.mark.parametrize("n", [40, 300, 2000])
@pytest.mark.parametrize("statistic", ["p50", "p90", "p95", "p99"])
def test_side_interval_is_scipys_distribution_free_quantile_interval(statistic, n):
    x = sorted_sample(3, n)
    q = QUANTILE[statistic]
    result = infer(statistic=statistic, direction=HIGHER, baseline=x, candidate=x)
    reference = stats.quantile_test(x, q=np.quantile(x, q), p=q).confidence_interval(0.95)
    assert result.baseline.value == pytest.approx(np.quantile(x, q))
    if math.isnan(reference.high) or math.isnan(reference.low):
        assert result.baseline.ci is None
        assert verdict(result, min_samples=30) == "insufficient_data"
    else:
        assert result.baseline.ci == (reference.low, reference.high)


@pytest.mark.parametrize("n", [30, 100, 1000])
@pytest.mark.parametrize("q", [0.5, 0.9, 0.95, 0.99])
def test_order_statistic_ranks_cover_at_least_one_minus_alpha(n, q):
    ranks = order_statistic_ranks(n, q, 0.05)
    if ranks is None:
        return
    low, high = ranks
    # B = number of observations below the true quantile; the interval holds it iff low ≤ B < high.
    coverage = stats.binom.cdf(high - 1, n, q) - stats.binom.cdf(low - 1, n, q)
    assert coverage >= 0.95


@pytest.mark.parametrize("direction", [HIGHER, LOWER])
@pytest.mark.parametrize("statistic", ["p50", "p90", "p95", "p99"])
def test_quantile_ratio_interval_matches_bootstrap(pair, statistic, direction):
    base, cand = pair
    result = infer(statistic=statistic, direction=direction, baseline=base, candidate=cand)
    reference = bootstrap_ratio(
        base, cand, lambda x, axis: np.quantile(x, QUANTILE[statistic], axis=axis), direction
    )
    assert result.method == "order-statistic"
    assert_close_on_log_scale(result.relative_performance_ci, reference, 0.15)


@pytest.mark.parametrize("direction", [HIGHER, LOWER])
def test_mean_ratio_interval_matches_bootstrap(pair, direction):
    base, cand = pair
    result = infer(statistic="mean", direction=direction, baseline=base, candidate=cand)
    reference = bootstrap_ratio(base, cand, lambda x, axis: np.mean(x, axis=axis), direction)
    assert result.method == "welch-fieller"
    assert_close_on_log_scale(result.relative_performance_ci, reference, 0.03)


@pytest.mark.parametrize(("direction", "alternative"), [(HIGHER, "greater"), (LOWER, "less")])
def test_mean_p_value_is_welchs_one_sided_t_test_towards_better(pair, direction, alternative):
    base, cand = pair
    result = infer(statistic="mean", direction=direction, baseline=base, candidate=cand)
    reference = stats.ttest_ind(cand, base, equal_var=False, alternative=alternative)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-12)
    assert result.candidate.ci == pytest.approx(tuple(stats.ttest_1samp(cand, 0).confidence_interval(0.95)))


@pytest.mark.parametrize(
    ("direction", "better", "worse"), [(HIGHER, "greater", "less"), (LOWER, "less", "greater")]
)
def test_distribution_is_one_sided_mann_whitney_in_the_better_direction(pair, direction, better, worse):
    base, cand = pair
    result = infer(statistic="distribution", direction=direction, baseline=base, candidate=cand)
    assert result.method == "mann-whitney"
    assert result.p_value == pytest.approx(stats.mannwhitneyu(cand, base, alternative=better).pvalue)
    assert result.p_value_worse == pytest.approx(stats.mannwhitneyu(cand, base, alternative=worse).pvalue)
    assert result.relative_performance_ci is None


@pytest.mark.parametrize("statistic", ["p50", "p95", "mean"])
def test_lower_is_better_inverts_the_ratio_and_its_interval(pair, statistic):
    base, cand = pair
    up = infer(statistic=statistic, direction=HIGHER, baseline=base, candidate=cand)
    down = infer(statistic=statistic, direction=LOWER, baseline=base, candidate=cand)
    assert down.relative_performance == pytest.approx(1 / up.relative_performance)
    low, high = up.relative_performance_ci
    assert down.relative_performance_ci == pytest.approx((1 / high, 1 / low))
    assert down.p_value == pytest.approx(1 - up.p_value)


def test_p99_of_30_samples_has_no_interval_and_says_why():
    x = sorted_sample(5, 30)
    result = infer(statistic="p99", direction=LOWER, baseline=x, candidate=x)
    assert result.relative_performance_ci is None and result.p_value is None
    assert "too few observations" in result.reason and "p99" in result.reason
    assert verdict(result, min_samples=30) == "insufficient_data"


@pytest.mark.parametrize("statistic", ["min", "max"])
def test_min_and_max_are_point_values_without_inference(pair, statistic):
    base, cand = pair
    result = infer(statistic=statistic, direction=HIGHER, baseline=base, candidate=cand)
    expected = (cand.min() / base.min()) if statistic == "min" else (cand.max() / base.max())
    assert (result.method, result.relative_performance_ci, result.p_value) == ("none", None, None)
    assert result.relative_performance == pytest.approx(expected)
    assert result.reason == f"no inference for {statistic}."
    assert verdict(result, min_samples=30) == "insufficient_data"


def test_non_positive_values_give_no_ratio():
    x = np.linspace(-10, 10, 500)
    result = infer(statistic="p50", direction=HIGHER, baseline=x, candidate=x + 20)
    assert result.relative_performance is None and result.relative_performance_ci is None
    assert "≤ 0" in result.reason


def test_verdict_needs_min_samples_on_each_side(pair):
    base, cand = pair
    result = infer(statistic="p50", direction=HIGHER, baseline=base[::40], candidate=cand)
    assert result.relative_performance_ci is not None
    assert verdict(result, min_samples=60) == "insufficient_data"
    assert verdict(result, min_samples=30) != "insufficient_data"


def test_verdict_follows_the_interval():
    base = sorted_sample(6, 1000)
    assert (
        verdict(infer(statistic="p90", direction=HIGHER, baseline=base, candidate=base * 1.2), min_samples=30)
        == "better"
    )
    assert (
        verdict(infer(statistic="p90", direction=LOWER, baseline=base, candidate=base * 1.2), min_samples=30)
        == "worse"
    )
    same = sorted_sample(7, 1000)
    assert (
        verdict(infer(statistic="p90", direction=LOWER, baseline=base, candidate=same), min_samples=30)
        == "no_difference"
    )


def test_issue_case_median_worse_p99_better_each_judged_on_its_own_interval():
    """Issue 10: startup p50 329 s vs 281 s (worse), p99 370 s vs 687 s (better), lower is better."""
    rng = np.random.default_rng(10)
    baseline = np.sort(rng.lognormal(math.log(281), math.log(687 / 281) / 2.326, 2000))
    candidate = np.sort(rng.normal(329, (370 - 329) / 2.326, 2000))
    p50 = infer(statistic="p50", direction=LOWER, baseline=baseline, candidate=candidate)
    p99 = infer(statistic="p99", direction=LOWER, baseline=baseline, candidate=candidate)
    assert p50.baseline.value == pytest.approx(281, rel=0.03) and p50.candidate.value == pytest.approx(
        329, rel=0.03
    )
    assert p99.baseline.value == pytest.approx(687, rel=0.1) and p99.candidate.value == pytest.approx(
        370, rel=0.03
    )

    def criterion(result):
        return judge(
            estimate=result.relative_performance,
            ci=result.relative_performance_ci,
            operator=">=",
            threshold=1.0,
            require_significant=True,
        )[0]

    assert criterion(p50) == "fail" and verdict(p50, min_samples=30) == "worse"
    assert criterion(p99) == "pass" and verdict(p99, min_samples=30) == "better"
    assert p50.p_value > 0.999 and p99.p_value < 1e-6
    # The whole-distribution test still says the candidate is stochastically slower.
    distribution = infer(statistic="distribution", direction=LOWER, baseline=baseline, candidate=candidate)
    assert verdict(distribution, min_samples=30) == "worse"
