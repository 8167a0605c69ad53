"""The rollup sketch against exact numpy/scipy answers, within its stated relative accuracy (no database)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from metrics.inference import infer, order_statistic_ranks, verdict
from metrics.rollups.mannwhitney import mannwhitneyu_grouped
from metrics.rollups.sketch import ACCURACY, GAMMA, Moments, Sketch, percentile_cont

BOUND = ACCURACY * (1 + 1e-9)  # floating-point slack at a bucket's edge
rng = np.random.default_rng(14)

SHAPES = {
    "lognormal": lambda n: rng.lognormal(3, 1.2, n),
    "bimodal": lambda n: np.concatenate([rng.normal(20, 1, n // 2), rng.normal(80, 3, n - n // 2)]),
    "uniform": lambda n: rng.uniform(100, 150, n),
    "heavy tail": lambda n: (rng.pareto(1.1, n) + 1) * 5,
    "ties": lambda n: rng.integers(1, 6, n).astype(float),
    "constant": lambda n: np.full(n, 42.0),
    "tiny and huge": lambda n: np.concatenate(
        [rng.uniform(1e-9, 2e-9, n // 2), rng.uniform(1e9, 3e9, n - n // 2)]
    ),
}


def relative(approx: float, exact: float) -> float:
    return abs(approx - exact) / abs(exact) if exact else abs(approx)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n", [1, 2, 7, 50, 20_000])
def test_every_rank_and_quantile_is_within_the_accuracy(shape, n):
    x = SHAPES[shape](n)
    sketch, ordered = Sketch.of_values(x), np.sort(x)
    assert len(sketch) == n
    for i in range(n) if n < 100 else rng.integers(0, n, 500):
        assert relative(sketch[int(i)], ordered[i]) <= BOUND, (shape, i)
    assert sketch[0] == ordered[0] and sketch[-1] == ordered[-1]  # the extremes are exact
    for q in (0.01, 0.25, 0.5, 0.9, 0.95, 0.99):
        assert relative(percentile_cont(sketch, q), np.quantile(x, q)) <= BOUND, (shape, q)


def test_negative_values_and_zeros_keep_their_order_and_accuracy():
    x = np.concatenate([-rng.lognormal(2, 1, 3000), np.zeros(500), rng.lognormal(1, 1, 3000)])
    sketch, ordered = Sketch.of_values(x), np.sort(x)
    for i in range(0, len(x), 7):
        assert relative(sketch[i], ordered[i]) <= BOUND
    assert sketch.zeros == 500


def test_moments_merge_like_one_pass():
    parts = [rng.normal(1e6, 1, 1000), rng.normal(1e6 + 5, 2, 3000), rng.normal(1e6 - 5, 0.5, 10)]
    merged = Moments()
    for part in parts:
        merged.add(len(part), part.sum(), ((part - part.mean()) ** 2).sum(), part.min(), part.max())
    whole = np.concatenate(parts)
    assert merged.n == len(whole)
    assert merged.mean == pytest.approx(whole.mean(), rel=1e-12)
    assert merged.variance == pytest.approx(whole.var(ddof=1), rel=1e-9)  # no cancellation at 1e6


@pytest.mark.parametrize("statistic", ["p50", "p90", "p95", "p99"])
@pytest.mark.parametrize(("shape", "shift"), [("lognormal", 1.0), ("lognormal", 0.97), ("bimodal", 1.02)])
def test_quantile_intervals_from_the_sketch_contain_the_exact_ones(statistic, shape, shift):
    """The order-statistic ranks map onto cumulative bucket counts; each bound is read to the outer
    edge of its rank's bucket: it contains the exact bound, at most one bucket (a factor γ) wider."""
    base, cand = np.sort(SHAPES[shape](30_000)), np.sort(SHAPES[shape](20_000) * shift)
    exact = infer(statistic=statistic, direction="lower_is_better", baseline=base, candidate=cand)
    approx = infer(
        statistic=statistic,
        direction="lower_is_better",
        baseline=Sketch.of_values(base),
        candidate=Sketch.of_values(cand),
    )
    width = GAMMA - 1 + 1e-9
    for a, e in ((approx.baseline, exact.baseline), (approx.candidate, exact.candidate)):
        assert relative(a.value, e.value) <= BOUND
        assert a.ci[0] <= e.ci[0] and a.ci[1] >= e.ci[1]
        assert all(relative(ab, eb) <= width for ab, eb in zip(a.ci, e.ci, strict=True))
    # A ratio of two values each within α is within (1 + α)/(1 − α) − 1 of the exact ratio.
    ratio_bound = (1 + ACCURACY) / (1 - ACCURACY) - 1 + 1e-9
    assert relative(approx.relative_performance, exact.relative_performance) <= ratio_bound
    low, high = exact.relative_performance_ci
    # The ratio's interval holds every exact one the buckets allow: the exact one, a few buckets wider.
    assert approx.relative_performance_ci[0] <= low and approx.relative_performance_ci[1] >= high
    assert relative(approx.relative_performance_ci[0], low) <= 4 * width
    assert relative(approx.relative_performance_ci[1], high) <= 4 * width
    exact_verdict, approx_verdict = verdict(exact, min_samples=30), verdict(approx, min_samples=30)
    # The same verdict, or the sketch says it cannot tell (and the comparison reads the rows).
    assert exact_verdict == approx_verdict or (approx.undecided and approx_verdict == "insufficient_data")


def test_a_difference_finer_than_a_bucket_is_undecided_not_no_difference():
    """Narrow samples, a 0.3 % shift: the exact verdict is `worse`, both sides sit in a bucket or two."""
    base = np.sort(rng.normal(100, 0.2, 20_000))
    cand = np.sort(rng.normal(100.3, 0.2, 20_000))
    args = {"statistic": "p50", "direction": "lower_is_better"}
    exact = infer(**args, baseline=base, candidate=cand)
    approx = infer(**args, baseline=Sketch.of_values(base), candidate=Sketch.of_values(cand))
    assert verdict(exact, min_samples=30) == "worse"
    assert approx.undecided and verdict(approx, min_samples=30) == "insufficient_data"
    low, high = approx.relative_performance_ci
    assert low <= exact.relative_performance_ci[0] and high >= exact.relative_performance_ci[1]


def test_the_ranks_are_the_exact_paths_ranks():
    """Same formula: the sketch's bound is the representative of the bucket holding that rank."""
    x = np.sort(SHAPES["uniform"](5000))
    sketch = Sketch.of_values(x)
    low, high = order_statistic_ranks(5000, 0.95, 0.05)
    assert relative(sketch[low - 1], x[low - 1]) <= BOUND
    assert relative(sketch[high - 1], x[high - 1]) <= BOUND


def test_mean_and_welch_from_moments_equal_the_exact_ones():
    base, cand = np.sort(SHAPES["lognormal"](5000)), np.sort(SHAPES["lognormal"](4000) * 0.9)
    exact = infer(statistic="mean", direction="lower_is_better", baseline=base, candidate=cand)
    approx = infer(
        statistic="mean",
        direction="lower_is_better",
        baseline=Sketch.of_values(base),
        candidate=Sketch.of_values(cand),
    )
    assert approx.p_value == pytest.approx(exact.p_value, rel=1e-6, abs=1e-300)
    assert approx.relative_performance_ci == pytest.approx(exact.relative_performance_ci, rel=1e-9)
    assert approx.baseline.ci == pytest.approx(exact.baseline.ci, rel=1e-9)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("moved_by", [1.0, 1.07])
def test_mann_whitney_from_buckets_is_scipys_on_the_bucket_values(alternative, moved_by):
    """Tie-corrected ranks by bucket: exactly scipy's asymptotic test on the representatives."""
    base, cand = Sketch.of_values(SHAPES["ties"](3000)), Sketch.of_values(SHAPES["lognormal"](2000))
    cv, cc = cand.grouped()
    bv, bc = base.grouped()
    ours = mannwhitneyu_grouped(cv, cc, bv * moved_by, bc, alternative=alternative)
    theirs = mannwhitneyu(
        np.repeat(cv, cc), np.repeat(bv * moved_by, bc), alternative=alternative, method="asymptotic"
    )
    assert ours.statistic == theirs.statistic
    assert ours.pvalue == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(("shift", "expected"), [(0.95, "better"), (1.05, "worse"), (1.0, None)])
def test_distribution_test_from_sketches_agrees_with_the_exact_test(shift, expected):
    base = np.sort(SHAPES["lognormal"](20_000))
    cand = np.sort(SHAPES["lognormal"](20_000) * shift)
    args = {"statistic": "distribution", "direction": "lower_is_better", "null_ratio": 1.0}
    exact = infer(**args, baseline=base, candidate=cand)
    approx = infer(**args, baseline=Sketch.of_values(base), candidate=Sketch.of_values(cand))
    # Values within one bucket count as ties: the effect size moves by at most that bucket's share.
    assert approx.effect_size == pytest.approx(exact.effect_size, abs=0.005)
    if expected:
        assert verdict(exact, min_samples=30) == verdict(approx, min_samples=30) == expected


@pytest.mark.parametrize("shape", ["lognormal", "bimodal", "ties", "uniform"])
@pytest.mark.parametrize("shift", [1.0, 1.002, 1.01, 1.05, 1.2])
@pytest.mark.parametrize("moved_by", [1.0, 1.03])
def test_mann_whitney_bounds_never_contradict_the_exact_test(shape, shift, moved_by):
    """Whatever certainly_significant says for sure, scipy's exact-sample test says too."""
    from metrics.rollups.mannwhitney import certainly_significant

    base, cand = SHAPES[shape](4000), SHAPES[shape](3000) * shift
    low, high, counts = Sketch.of_values(base).ranges()
    moved = (low * moved_by, high * moved_by, counts)
    for alternative in ("greater", "less"):
        sure = certainly_significant(
            Sketch.of_values(cand).ranges(), moved, alternative=alternative, level=0.025
        )
        exact = (
            mannwhitneyu(cand, base * moved_by, alternative=alternative, method="asymptotic").pvalue < 0.025
        )
        assert sure is None or sure == exact, (alternative, sure, exact)
