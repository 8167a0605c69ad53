"""Mann–Whitney U from grouped values (a histogram's representatives and counts), no sort of the rows.

The same statistic, tie correction and continuity correction as scipy.stats.mannwhitneyu(x, y,
method="asymptotic") on the expanded samples (np.repeat of values by counts), computed from the
distinct values alone: each group of equal values gets its midrank, R₁ = Σ count₁ × midrank, and the
tie term Σ(t³ − t) runs over the groups. Values that share a histogram bucket are one group, so the
test from rollups treats values within a bucket width (0.2 %, γ ≈ 1.002) of each other as ties.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.stats import norm


class MannWhitney(NamedTuple):
    statistic: float  # U of the first sample (x)
    pvalue: float


def mannwhitneyu_grouped(
    x_values: np.ndarray,
    x_counts: np.ndarray,
    y_values: np.ndarray,
    y_counts: np.ndarray,
    *,
    alternative: str,
) -> MannWhitney:
    """U₁ of x against y and the asymptotic one-sided ("greater" | "less") or two-sided p-value."""
    n1, n2 = int(np.sum(x_counts)), int(np.sum(y_counts))
    values, inverse = np.unique(np.concatenate([x_values, y_values]), return_inverse=True)
    tx = np.bincount(inverse[: len(x_values)], weights=x_counts, minlength=len(values))
    ty = np.bincount(inverse[len(x_values) :], weights=y_counts, minlength=len(values))
    ties = tx + ty
    below = np.cumsum(ties) - ties  # how many values are smaller than each group
    midranks = below + (ties + 1) / 2
    u1 = float(np.dot(tx, midranks)) - n1 * (n1 + 1) / 2
    n = n1 + n2
    tie_term = float(np.sum(ties**3 - ties))
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))) if n > 1 else 0.0
    u = {"greater": u1, "less": n1 * n2 - u1, "two-sided": max(u1, n1 * n2 - u1)}[alternative]
    if sigma == 0:
        return MannWhitney(u1, math.nan)
    z = (u - n1 * n2 / 2 - 0.5) / sigma
    p = float(norm.sf(z)) * (2 if alternative == "two-sided" else 1)
    return MannWhitney(u1, min(p, 1.0))


def certainly_significant(
    x: tuple[np.ndarray, np.ndarray, np.ndarray],
    y: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    alternative: str,
    level: float,
) -> bool | None:
    """Whether the exact one-sided test ("greater" | "less") of x against y rejects at `level`,
    whatever the values inside their ranges: True, False, or None when the ranges cannot tell.

    x and y are (lows, highs, counts): each value lies in its closed range. U₁ (pairs with x > y, ties
    half) lies between the pairs certainly greater and all pairs but those certainly smaller. The
    exact tie term T lies between 0 and a bound: a tie group of the exact values sits in one x range
    and one y range that overlap, so Σ(g³ − g) ≤ Σ(c + b)³ ≤ 4(Σ c³ + Σ b³) over the ranges' counts.
    The z of the exact test is then within the extremes of (U − n₁n₂/2 − ½) / σ(T)."""
    (x_low, x_high, x_count), (y_low, y_high, y_count) = x, y
    n1, n2 = float(x_count.sum()), float(y_count.sum())
    n = n1 + n2
    if n1 == 0 or n2 == 0 or n < 2:
        return None

    def below(
        bounds: np.ndarray, order: np.ndarray, weights: np.ndarray, at: np.ndarray, side: str
    ) -> np.ndarray:
        ends = np.concatenate([[0.0], np.cumsum(weights[order])])
        return ends[np.searchsorted(bounds[order], at, side=side)]  # type: ignore[call-overload]

    by_high, by_low = np.argsort(y_high, kind="stable"), np.argsort(y_low, kind="stable")
    greater = float(np.dot(x_count, below(y_high, by_high, y_count, x_low, "left")))  # y_high < x_low
    smaller = float(np.dot(x_count, n2 - below(y_low, by_low, y_count, x_high, "right")))  # y_low > x_high
    u_low, u_high = greater, n1 * n2 - smaller
    if alternative == "less":
        u_low, u_high = n1 * n2 - u_high, n1 * n2 - u_low
    ties = 4 * (float(np.sum(x_count.astype(float) ** 3)) + float(np.sum(y_count.astype(float) ** 3)))
    base = n1 * n2 / 12
    sigma_high = math.sqrt(base * (n + 1))
    sigma_low = math.sqrt(max(base * ((n + 1) - ties / (n * (n - 1))), 0.0))
    critical = float(norm.isf(level))

    def z(numerator: float, sigma_small: bool) -> float:
        sigma = sigma_low if sigma_small else sigma_high
        if sigma == 0:
            return math.copysign(math.inf, numerator) if numerator else 0.0
        return numerator / sigma

    top, bottom = u_high - n1 * n2 / 2 - 0.5, u_low - n1 * n2 / 2 - 0.5
    z_max, z_min = z(top, top > 0), z(bottom, bottom <= 0)
    if z_min > critical:
        return True
    if z_max <= critical:
        return False
    return None
