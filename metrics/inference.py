"""Confidence intervals and one-sided tests for old-vs-new comparisons (issue 10). Pure: numpy/scipy only (and core.numbers to write p-values).

Every answer is about the ratio the criterion compares, ``relative_performance`` (> 1 means the
candidate is better: cand/base when higher is better, base/cand when lower is better).

- Quantiles: distribution-free order-statistic interval per side (two ranks from the binomial
  distribution, so only the sorted sample is read); the ratio interval combines both sides on the log
  scale (MOVER: each ratio bound from the matching side bounds), and the one-sided p-value is the
  same normal approximation (se ≈ distance to the facing bound / z).
- Mean: per-side t-interval, Welch's t for the p-value, Fieller's interval for the ratio of means.
- min/max: point values only.
- distribution: Mann–Whitney U, one-sided. Its ``relative_performance`` is the direction-aware ratio
  of medians (so it reads like every other statistic); ``effect_size`` is the common-language effect
  size, the probability that a candidate observation beats a baseline one (ties count half). There is
  no interval: a criterion's threshold t is tested directly (``null_ratio``), by comparing the
  candidate with the baseline moved by the factor t in the better direction, so "relative ≥ 0.8,
  significant" asks whether the candidate is stochastically better than 80 % of the baseline.
"""

from __future__ import annotations

import math
import operator as op
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
from scipy.stats import binom, mannwhitneyu, norm, t, ttest_ind, ttest_ind_from_stats

from core.numbers import p_statement

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from metrics.rollups.buckets import Buckets
    from metrics.rollups.sketch import Sketch

# A side's values: a sorted float array, or a rollup sketch that stands for one (metrics.rollups).
Sample: TypeAlias = "np.ndarray | Sketch | Buckets"

QUANTILES = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}
STATISTICS = (*QUANTILES, "mean", "min", "max", "distribution")
DIRECTIONS = ("higher_is_better", "lower_is_better")
OPERATORS = {">=": op.ge, ">": op.gt, "<=": op.le, "<": op.lt}
OPERATOR_ALIASES = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<"}
SHOWN = {">=": "≥", ">": ">", "<=": "≤", "<": "<"}  # how a reason writes the operator


@dataclass(frozen=True)
class SideEstimate:
    n: int
    value: float | None
    ci: tuple[float, float] | None


@dataclass(frozen=True)
class Inference:
    statistic: str
    method: str
    alpha: float
    baseline: SideEstimate
    candidate: SideEstimate
    relative_performance: float | None
    relative_performance_ci: tuple[float, float] | None
    p_value: float | None  # one-sided, H1: the candidate is better
    reason: str
    p_value_worse: float | None = None  # one-sided, H1: the candidate is worse (distribution only)
    effect_size: float | None = None  # distribution only: P(candidate observation is better)
    null_ratio: float = 1.0  # distribution only: the relative performance the tests are against
    # Read from buckets (a rollup sketch, histogram points): the interval contains the exact one and
    # straddles 1, but the exact one might not; the buckets cannot tell this verdict (`verdict`).
    undecided: bool = False


def infer(
    *,
    statistic: str,
    direction: str,
    baseline: Sample,
    candidate: Sample,
    alpha: float = 0.05,
    null_ratio: float = 1.0,
) -> Inference:
    """Inference for one statistic; ``baseline`` and ``candidate`` are 1-D float arrays sorted ascending.

    ``null_ratio`` moves the `distribution` tests off 1 (a criterion's threshold); the intervals of the
    other statistics answer every threshold at once, so they ignore it."""
    if statistic not in STATISTICS:
        raise ValueError(f"unknown statistic {statistic}")
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction}")
    higher = direction == "higher_is_better"
    # A rollup sketch (metrics.rollups) stands for a sorted sample: len(), [i] by rank, its moments.
    base, cand = (x if _is_sketch(x) else np.asarray(x, dtype=float) for x in (baseline, candidate))
    if statistic in QUANTILES:
        return _quantile(statistic, QUANTILES[statistic], higher, base, cand, alpha)
    if statistic == "mean":
        return _mean(higher, base, cand, alpha)
    if statistic == "distribution":
        if not null_ratio > 0 or not math.isfinite(null_ratio):
            raise ValueError("null_ratio must be a positive finite number")
        return _distribution(higher, base, cand, alpha, null_ratio)
    pick: Callable[[Sample], float] = (
        (lambda x: float(x[0])) if statistic == "min" else (lambda x: float(x[-1]))
    )
    base_side, cand_side = (SideEstimate(len(x), pick(x) if len(x) else None, None) for x in (base, cand))
    ratio, why = _ratio(base_side.value, cand_side.value, higher)
    return Inference(
        statistic,
        "none",
        alpha,
        base_side,
        cand_side,
        ratio,
        None,
        None,
        why or f"no inference for {statistic}.",
    )


def _is_sketch(x: Sample) -> TypeIs[Sketch | Buckets]:
    # By its moments, not isinstance: this module stays free of the rollups package at run time.
    return hasattr(x, "moments")


def _ratio(base: float | None, cand: float | None, higher: bool) -> tuple[float | None, str]:
    if base is None or cand is None:
        return None, "a side has no observations."
    num, den = (cand, base) if higher else (base, cand)
    if num <= 0 or den <= 0:
        return None, "a value is ≤ 0, so no ratio (and no log-ratio interval) can be formed."
    return num / den, ""


def _interpolated(x: Sample, q: float) -> float:
    """The linear-interpolation quantile of a sorted sample (PostgreSQL's percentile_cont) in O(1)."""
    h = (len(x) - 1) * q
    low = math.floor(h)
    high = min(low + 1, len(x) - 1)
    return float(x[low] + (h - low) * (x[high] - x[low]))


@lru_cache(maxsize=1024)
def order_statistic_ranks(n: int, q: float, alpha: float) -> tuple[int, int] | None:
    """1-based ranks (l, u) with P(X_(l) ≤ ξ_q ≤ X_(u)) ≥ 1 − alpha for any continuous distribution.

    With B ~ Binomial(n, q) the number of observations below ξ_q, the interval misses below with
    probability P(B < l) < alpha/2 and above with P(B ≥ u) ≤ alpha/2. None when a rank leaves 1..n.
    """
    low = int(binom.ppf(alpha / 2, n, q))
    high = int(binom.ppf(1 - alpha / 2, n, q)) + 1
    if low < 1 or high > n:
        return None
    return low, high


def _rank_interval(x: Sample, ranks: tuple[int, int]) -> tuple[float, float]:
    """The values at the 1-based ranks; for a bracketed sample (histogram buckets, a rollup sketch)
    the outer ends of the brackets holding them (metrics.rollups.buckets), so the interval is never
    narrower than the one of the values."""
    bracket = getattr(x, "bracket", None)
    if bracket is not None:
        return float(bracket(ranks[0] - 1)[0]), float(bracket(ranks[1] - 1)[1])
    return float(x[ranks[0] - 1]), float(x[ranks[1] - 1])


def _rank_inner(x: Sample, ranks: tuple[int, int]) -> tuple[float, float]:
    """The narrowest the interval of the values at these ranks can be: the inner bracket ends."""
    bracket = getattr(x, "bracket", None)
    if bracket is not None:
        return float(bracket(ranks[0] - 1)[1]), float(bracket(ranks[1] - 1)[0])
    return float(x[ranks[0] - 1]), float(x[ranks[1] - 1])


def _value_bound(x: Sample, q: float, value: float) -> tuple[float, float]:
    """Where the exact quantile lies: the point itself for values, its brackets' span otherwise."""
    bound = getattr(x, "bound", None)
    return bound(q) if bound is not None else (value, value)


@dataclass(frozen=True)
class _Side:
    """One side of a quantile comparison on the log scale: the point and its interval, each as the
    range it certainly lies in (a point for exact values; bucket edges for bracketed samples)."""

    value: tuple[float, float]  # ln of the exact quantile lies in [low, high]
    ci_low: tuple[float, float]  # ln of the exact interval's lower end lies in [low, high]
    ci_high: tuple[float, float]


def _log_side(x: Sample, q: float, side: SideEstimate, ranks: tuple[int, int]) -> _Side:
    assert side.value is not None and side.ci is not None
    value = _value_bound(x, q, side.value)
    inner = _rank_inner(x, ranks)
    ln = math.log
    return _Side(
        (ln(value[0]), ln(value[1])),
        (ln(side.ci[0]), ln(max(side.ci[0], inner[0]))),
        (ln(min(side.ci[1], inner[1])), ln(side.ci[1])),
    )


def _mover(num: _Side, den: _Side) -> tuple[tuple[float, float], tuple[float, float]]:
    """MOVER (Zou & Donner 2008) on the log scale, over every exact sample the brackets allow.

    Each bound of ln(num/den) is ln num − ln den ∓ hypot(spread of num, spread of den), the spreads
    taken from the matching side bounds. The lower bound grows with ln num, falls with ln den and falls
    as either spread grows (likewise, mirrored, the upper), so its smallest value over the brackets
    takes the low point of num, the high point of den and the widest spreads; its largest, the
    opposite ends and the narrowest spreads (never below 0: a side's interval holds its point).
    Returns (the outer interval, which contains the exact one; the inner, which the exact contains).
    For exact values both are the one MOVER interval."""
    outer_low = (
        num.value[0] - den.value[1] - math.hypot(num.value[1] - num.ci_low[0], den.ci_high[1] - den.value[0])
    )
    outer_high = (
        num.value[1] - den.value[0] + math.hypot(num.ci_high[1] - num.value[0], den.value[1] - den.ci_low[0])
    )
    inner_low = (
        num.value[1]
        - den.value[0]
        - math.hypot(max(num.value[0] - num.ci_low[1], 0.0), max(den.ci_high[0] - den.value[1], 0.0))
    )
    inner_high = (
        num.value[0]
        - den.value[1]
        + math.hypot(max(num.ci_high[0] - num.value[1], 0.0), max(den.value[0] - den.ci_low[1], 0.0))
    )
    return (outer_low, outer_high), (inner_low, inner_high)


def _quantile(name: str, q: float, higher: bool, base: Sample, cand: Sample, alpha: float) -> Inference:
    sides: list[SideEstimate] = []
    all_ranks: list[tuple[int, int] | None] = []
    for x in (base, cand):
        ranks = order_statistic_ranks(len(x), q, alpha) if len(x) else None
        ci = _rank_interval(x, ranks) if ranks else None
        sides.append(SideEstimate(len(x), _interpolated(x, q) if len(x) else None, ci))
        all_ranks.append(ranks)
    base_side, cand_side = sides
    ratio, why = _ratio(base_side.value, cand_side.value, higher)
    missing = [s for s, side in zip(("baseline", "candidate"), sides, strict=True) if side.ci is None]
    if missing:
        why = why or (
            f"too few observations for an order-statistic interval of the {name} "
            f"({' and '.join(missing)}: n = {', '.join(str(s.n) for s in sides if s.ci is None)})."
        )
    elif any(s.ci is not None and s.ci[0] <= 0 for s in sides):
        why = why or "a value is ≤ 0, so no log-ratio interval can be formed."
    elif any(_value_bound(x, q, s.value or 0.0)[0] <= 0 for x, s in zip((base, cand), sides, strict=True)):
        why = "a value may be ≤ 0 within its bucket, so no log-ratio interval can be formed."
    if why or ratio is None:
        return Inference(name, "order-statistic", alpha, base_side, cand_side, ratio, None, None, why)
    # A skewed side interval (a sparse tail, a gap between two modes) widens only the bound it affects.
    base_ranks, cand_ranks = all_ranks
    assert base_ranks is not None and cand_ranks is not None  # both sides have an interval here
    base_log, cand_log = _log_side(base, q, base_side, base_ranks), _log_side(cand, q, cand_side, cand_ranks)
    num, den = (cand_log, base_log) if higher else (base_log, cand_log)
    (low, high), (inner_low, inner_high) = _mover(num, den)
    ci = (math.exp(low), math.exp(high))
    log_ratio = math.log(ratio)
    # One-sided p from the same approximation: the bound facing 1 gives the standard error.
    se = ((log_ratio - low) if log_ratio > 0 else (high - log_ratio)) / float(norm.ppf(1 - alpha / 2))
    if se <= 0:
        p = 0.0 if log_ratio > 0 else 1.0 if log_ratio < 0 else 0.5
    else:
        p = float(norm.sf(log_ratio / se))
    # The outer interval straddles 1 but the exact one might lie on one side of it: the buckets
    # are too coarse for this verdict (never the case for exact values, where inner is outer).
    undecided = low <= 0 <= high and not (inner_low <= 0 <= inner_high)
    return Inference(
        name, "order-statistic", alpha, base_side, cand_side, ratio, ci, p, "", undecided=undecided
    )


def _mean(higher: bool, base: Sample, cand: Sample, alpha: float) -> Inference:
    sides: list[SideEstimate] = []
    moments: list[tuple[float | None, float | None, int]] = []
    for x in (base, cand):
        n = len(x)
        mean: float | None
        var: float | None
        if _is_sketch(x):
            mean, var = x.moments.mean, x.moments.variance
            var = var / n if var is not None else None
        else:
            mean = float(x.mean()) if n else None
            var = float(x.var(ddof=1)) / n if n >= 2 else None
        ci = None
        if var is not None and mean is not None:
            half = float(t.ppf(1 - alpha / 2, n - 1)) * math.sqrt(var)
            ci = (mean - half, mean + half)
        sides.append(SideEstimate(n, mean, ci))
        moments.append((mean, var, n))
    base_side, cand_side = sides
    ratio, why = _ratio(base_side.value, cand_side.value, higher)
    known = [(mean, var, n) for mean, var, n in moments if mean is not None and var is not None]
    if not why and len(known) < 2:
        why = "a side has fewer than 2 observations: no variance, no interval."
    if why:
        return Inference("mean", "welch-fieller", alpha, base_side, cand_side, ratio, None, None, why)
    alternative = "greater" if higher else "less"
    if _is_sketch(base):
        (mb, vb, nb), (mc, vc, nc) = known
        test = ttest_ind_from_stats(
            mc, math.sqrt(vc * nc), nc, mb, math.sqrt(vb * nb), nb, equal_var=False, alternative=alternative
        )
    else:
        test = ttest_ind(cand, base, equal_var=False, alternative=alternative)
    p = None if math.isnan(test.pvalue) else float(test.pvalue)
    (num, var_num, n_num), (den, var_den, n_den) = known[::-1] if higher else known
    ci, why = _fieller(num, var_num, n_num, den, var_den, n_den, alpha)
    return Inference("mean", "welch-fieller", alpha, base_side, cand_side, ratio, ci, p, why)


def _fieller(
    num: float, var_num: float, n_num: int, den: float, var_den: float, n_den: int, alpha: float
) -> tuple[tuple[float, float] | None, str]:
    """Fieller's interval for num/den, independent means with unequal variances (Welch–Satterthwaite df).

    The interval holds the ratios R for which (num − R·den)² ≤ t²·(var_num + R²·var_den).
    """
    total = var_num + var_den
    if total == 0:
        return (num / den, num / den), ""
    df = total**2 / (var_num**2 / max(n_num - 1, 1) + var_den**2 / max(n_den - 1, 1))
    tc2 = float(t.ppf(1 - alpha / 2, df)) ** 2
    a = den**2 - tc2 * var_den
    if a <= 0:
        return None, "the denominator mean is not distinguishable from 0: Fieller's interval is unbounded."
    b = num * den
    disc = b**2 - a * (num**2 - tc2 * var_num)
    root = math.sqrt(max(disc, 0.0))
    return ((b - root) / a, (b + root) / a), ""


def _distribution(higher: bool, base: Sample, cand: Sample, alpha: float, null_ratio: float) -> Inference:
    base_side, cand_side = (
        SideEstimate(len(x), _interpolated(x, 0.5) if len(x) else None, None) for x in (base, cand)
    )
    ratio, why = _ratio(base_side.value, cand_side.value, higher)
    if not len(base) or not len(cand):
        empty = ("distribution", "mann-whitney", alpha, base_side, cand_side, ratio, None, None, why)
        return Inference(*empty, null_ratio=null_ratio)
    # Relative performance r = cand/base (higher is better) or base/cand (lower is better), so
    # "r > t" is "cand > t·base" or "cand < base/t": the baseline moved by t in the better direction.
    better, worse = ("greater", "less") if higher else ("less", "greater")
    undecided = False
    if not _is_sketch(base):
        moved = base * null_ratio if higher else base / null_ratio
        p_better = mannwhitneyu(cand, moved, alternative=better, method="asymptotic")
        p_worse = mannwhitneyu(cand, moved, alternative=worse, method="asymptotic")
    else:  # from the histograms: values tie within a bucket
        from metrics.rollups.mannwhitney import certainly_significant, mannwhitneyu_grouped

        assert _is_sketch(cand)  # both sides come from one read: both rollups or both rows
        cand_values, cand_counts = cand.grouped()
        base_values, base_counts = base.grouped()
        moved_values = base_values * null_ratio if higher else base_values / null_ratio
        p_better, p_worse = (
            mannwhitneyu_grouped(cand_values, cand_counts, moved_values, base_counts, alternative=side)
            for side in (better, worse)
        )
        # The verdict the grouped test gives must be the one every exact sample in the buckets gives.
        factor = null_ratio if higher else 1 / null_ratio
        low, high, counts = base.ranges()
        moved_ranges = (low * factor, high * factor, counts)
        sure_better, sure_worse = (
            certainly_significant(cand.ranges(), moved_ranges, alternative=side, level=alpha / 2)
            for side in (better, worse)
        )
        if float(p_better.pvalue) < alpha / 2:
            undecided = sure_better is not True
        elif float(p_worse.pvalue) < alpha / 2:
            undecided = sure_worse is not True or sure_better is not False
        else:
            undecided = sure_better is not False or sure_worse is not False
    u = float(p_better.statistic) / (len(base) * len(cand))  # P(cand > moved base) + ½ P(tie)
    return Inference(
        "distribution",
        "mann-whitney",
        alpha,
        base_side,
        cand_side,
        ratio,
        None,
        float(p_better.pvalue),
        "a whole-distribution shift test: no interval of a ratio.",
        p_value_worse=float(p_worse.pvalue),
        effect_size=u if higher else 1 - u,
        null_ratio=null_ratio,
        undecided=undecided,
    )


def verdict(inference: Inference, *, min_samples: int) -> str:
    """better | worse | no_difference | insufficient_data, from the interval (p-values for distribution)."""
    if min(inference.baseline.n, inference.candidate.n) < min_samples:
        return "insufficient_data"
    if inference.statistic == "distribution":
        if inference.p_value is None or inference.p_value_worse is None or inference.undecided:
            return "insufficient_data"
        # Two one-sided tests at alpha/2 each: the same error rate as the two-sided interval.
        if inference.p_value < inference.alpha / 2:
            return "better"
        if inference.p_value_worse < inference.alpha / 2:
            return "worse"
        return "no_difference"
    ci = inference.relative_performance_ci
    if ci is None or inference.undecided:
        return "insufficient_data"
    if ci[0] > 1:
        return "better"
    if ci[1] < 1:
        return "worse"
    return "no_difference"


def judge(
    *,
    estimate: float | None,
    ci: tuple[float, float] | None,
    operator: str,
    threshold: float,
    require_significant: bool,
    no_interval_reason: str = "",
) -> tuple[str, str]:
    """pass | fail | inconclusive, and why, for "estimate <operator> threshold".

    With ``require_significant`` the whole interval must clear the threshold to pass (">=": lower
    bound ≥ t; ">": lower bound > t) and must lie wholly on the wrong side to fail (">=": upper bound
    < t; ">": upper bound ≤ t); "<=" and "<" mirror that. Otherwise the point estimate decides.
    """
    symbol = OPERATOR_ALIASES.get(operator, operator)
    if symbol not in OPERATORS:
        raise ValueError(f"unknown operator {operator}")
    holds = OPERATORS[symbol]
    shown_op = SHOWN[symbol]
    if estimate is None:
        return "inconclusive", no_interval_reason or "no estimate to compare with the threshold."
    shown = f"{estimate:.4g}" + (f" (interval {ci[0]:.4g} – {ci[1]:.4g})" if ci else "")
    statement = f"{shown} {shown_op} {threshold:g}"
    if not require_significant:
        if holds(estimate, threshold):
            return "pass", f"{statement} holds."
        return "fail", f"{statement} does not hold."
    if ci is None:
        why = no_interval_reason or "no confidence interval could be formed"
        return "inconclusive", f"significance required but there is no interval: {why.rstrip('.')}."
    # The bound that must clear the threshold, and the one that shows it cannot.
    near, far = (ci[0], ci[1]) if symbol in (">=", ">") else (ci[1], ci[0])
    if holds(near, threshold):
        return "pass", f"{statement}: the whole interval satisfies {shown_op} {threshold:g}."
    if not holds(far, threshold):
        return "fail", f"{statement}: the whole interval violates {shown_op} {threshold:g}."
    return "inconclusive", f"{statement}: the interval straddles the threshold {threshold:g}."


def judge_shift(
    *,
    estimate: float | None,
    p_better: float | None,
    p_worse: float | None,
    alpha: float,
    operator: str,
    threshold: float,
    require_significant: bool,
    no_test_reason: str = "",
) -> tuple[str, str]:
    """pass | fail | inconclusive for a `distribution` criterion "relative performance <op> t".

    ``estimate`` is the median ratio; ``p_better``/``p_worse`` are the one-sided p-values of an
    ``infer(..., null_ratio=t)`` (H1: r > t, H1: r < t). With ``require_significant`` the
    one-sided Mann–Whitney test in the operator's direction must reject at α/2 to pass (the same error
    rate as a (1 − α) interval's bound), and the opposite test must reject at α/2 to fail; neither
    is inconclusive. Without it the median ratio decides, as the point estimate does elsewhere.
    """
    symbol = OPERATOR_ALIASES.get(operator, operator)
    if symbol not in OPERATORS:
        raise ValueError(f"unknown operator {operator}")
    shown_op, level = SHOWN[symbol], alpha / 2
    if estimate is None:
        return "inconclusive", no_test_reason or "no estimate to compare with the threshold."
    statement = f"median ratio {estimate:.4g} {shown_op} {threshold:g}"
    if not require_significant:
        holds = OPERATORS[symbol](estimate, threshold)
        return ("pass", f"{statement} holds.") if holds else ("fail", f"{statement} does not hold.")
    if p_better is None or p_worse is None:
        why = (no_test_reason or "a side has no observations").rstrip(".")
        return "inconclusive", f"significance required but there is no test: {why}."
    toward, away = (p_better, p_worse) if symbol in (">=", ">") else (p_worse, p_better)
    shifted = f"against the baseline moved by {threshold:g}×"
    if toward < level:
        return "pass", f"{statement}: Mann–Whitney {shifted}: {p_statement(toward)}, below α/2 = {level:g}."
    if away < level:
        return (
            "fail",
            f"{statement}: Mann–Whitney {shifted} shows the opposite: {p_statement(away)}, below α/2 = {level:g}.",
        )
    return "inconclusive", (
        f"{statement}: Mann–Whitney {shifted} is not significant either way at α/2 = {level:g} "
        f"({p_statement(toward)} toward, {p_statement(away)} against)."
    )
