"""Mann–Whitney U from grouped values (a histogram's representatives and counts), no sort of the rows.

The same statistic, tie correction and continuity correction as scipy.stats.mannwhitneyu(x, y,
method="asymptotic") on the expanded samples (np.repeat of values by counts), computed from the
distinct values alone: each group of equal values gets its midrank, R₁ = Σ count₁ × midrank, and the
tie term Σ(t³ − t) runs over the groups. Values that share a histogram bucket are one group, so the
test from rollups treats values within the bucket width (0.5 %) of each other as ties.
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
