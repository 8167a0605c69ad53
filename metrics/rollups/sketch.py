"""A mergeable log-bucket histogram (DDSketch's bucketing) with exact moments, for one window of rows.

A positive value v falls in bucket k = ⌈ln v / ln γ⌉, the interval (γ^(k−1), γ^k]; its representative
2γ^k / (γ + 1) is within ACCURACY of every value of the bucket, relatively, for γ = (1 + α)/(1 − α).
Negative values are bucketed by magnitude, zeros counted apart. So the value of any rank (an order
statistic) read from the cumulative bucket counts is within α of the true one, and so is any
interpolation between two of them of the same sign (percentile_cont, the intervals' bounds). The
smallest and largest ranks return the exact min and max. The buckets are computed in SQL
(metrics.rollups.maintain) from this module's LOG_GAMMA, so the two can never disagree.

A `Sketch` quacks like the sorted array the exact path hands to `metrics.inference`: `len(s)`, `s[i]`
(the i-th smallest, negative i from the end); plus the moments for the mean and the grouped values for
Mann–Whitney U. Like `metrics.rollups.buckets.Buckets` it also says where each rank certainly lies,
`bracket(i)`: its bucket's edges (clamped to the exact min and max). The order-statistic intervals
are read from those edges, so an interval from a sketch always contains the exact one: two ranks in
one bucket give that bucket's width, not a point.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import orjson
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from metrics.rollups.buckets import Buckets

# α: the relative error bound of every value read from a sketch. 0.1 %, not DDSketch's usual 1 %: a
# verdict the buckets cannot settle is re-read from the rows, and at 0.5 % a 2 % shift of a p95 already
# was (a rank's interval and its point can share one bucket, so the widened interval grows by about
# 2.4 bucket widths). At 0.1 % the rollups settle shifts down to about 0.5 %, for 5× the buckets: a
# 1M-row comparison took 16 ms instead of 11 (benchmarks/compare.py). Changing it needs a migration
# that recomputes every rollup (metrics/migrations/0016_rollups_finer_buckets.py).
ACCURACY = 0.001
GAMMA = (1 + ACCURACY) / (1 - ACCURACY)
LOG_GAMMA = math.log(GAMMA)


# The SQL's ⌈ln|v| / ln γ⌉ and γ**k are each a few ulps off: an edge moved out by far more than that
# still holds every value its key was computed for.
EDGE_SLACK = 1e-9


def representative(key: int) -> float:
    """The value standing for bucket `key` of magnitudes: within ACCURACY of each one in it."""
    return 2 * GAMMA**key / (GAMMA + 1)


def percentile_cont(ordered: np.ndarray | Sketch | Buckets, fraction: float) -> float:
    """PostgreSQL's percentile_cont of an ascending, non-empty sample (orderedsetaggs.c, float8_lerp)."""
    position = fraction * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    if low == high:
        return float(ordered[low])
    low_value, high_value = float(ordered[low]), float(ordered[high])
    return low_value + (position - low) * (high_value - low_value)


@dataclass
class Moments:
    """n, sum, the sum of squared deviations (m2) and the extremes; merged by Chan et al.'s formula."""

    n: int = 0
    total: float = 0.0
    m2: float = 0.0
    min: float = math.inf
    max: float = -math.inf

    def add(self, n: int, total: float, m2: float, low: float, high: float) -> None:
        if not n:
            return
        if self.n:
            delta = total / n - self.total / self.n
            self.m2 += m2 + delta * delta * self.n * n / (self.n + n)
        else:
            self.m2 = m2
        self.n += n
        self.total += total
        self.min, self.max = min(self.min, low), max(self.max, high)

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    @property
    def variance(self) -> float | None:
        """The sample variance (ddof = 1)."""
        return max(self.m2, 0.0) / (self.n - 1) if self.n >= 2 else None


@dataclass
class Sketch:
    moments: Moments = field(default_factory=Moments)
    positive: dict[int, int] = field(default_factory=dict)  # bucket key → count
    negative: dict[int, int] = field(default_factory=dict)  # by magnitude
    zeros: int = 0
    _cumulative: tuple[list[int], list[float]] | None = field(default=None, repr=False)
    _edges: Buckets | None = field(default=None, repr=False)

    def add_bucket(self, sign: int, key: int, count: int) -> None:
        """Add `count` values of one bucket (sign −1, 0 or 1; key as LOG_GAMMA keys it)."""
        if sign == 0:
            self.zeros += count
        else:
            target = self.positive if sign > 0 else self.negative
            target[key] = target.get(key, 0) + count
        self._cumulative = self._edges = None

    def add_bins(self, positive: dict[str, int] | str, negative: dict[str, int] | str, zeros: int) -> None:
        """Add bucket counts ({key: count}, or its JSON text as Django's cursor returns jsonb)."""
        for target, source in ((self.positive, positive), (self.negative, negative)):
            source = orjson.loads(source) if isinstance(source, str) else source
            for key, count in source.items():
                target[int(key)] = target.get(int(key), 0) + int(count)
        self.zeros += int(zeros)
        self._cumulative = self._edges = None

    @classmethod
    def of_values(cls, values: ArrayLike) -> Sketch:
        """The sketch of an array (tests and cross-checks; production sketches come from SQL)."""
        x = np.asarray(values, dtype=float)
        sketch = cls()
        if len(x):
            sketch.moments.add(len(x), float(x.sum()), float(((x - x.mean()) ** 2).sum()), x.min(), x.max())
        for sign, target in ((1, sketch.positive), (-1, sketch.negative)):
            magnitudes = x[x * sign > 0] * sign
            keys, counts = np.unique(np.ceil(np.log(magnitudes) / LOG_GAMMA).astype(int), return_counts=True)
            target.update(zip(keys.tolist(), counts.tolist(), strict=True))
        sketch.zeros = int((x == 0).sum())
        return sketch

    def grouped(self) -> tuple[np.ndarray, np.ndarray]:
        """Ascending representatives and their counts: the sample as the histogram knows it."""
        values = [-representative(k) for k in sorted(self.negative, reverse=True)]
        counts = [self.negative[k] for k in sorted(self.negative, reverse=True)]
        if self.zeros:
            values.append(0.0)
            counts.append(self.zeros)
        values += [representative(k) for k in sorted(self.positive)]
        counts += [self.positive[k] for k in sorted(self.positive)]
        return np.asarray(values, dtype=float), np.asarray(counts, dtype=np.int64)

    def __len__(self) -> int:
        return self.moments.n

    def _rank(self, index: int) -> int:
        """`index` as a 0-based rank, negative counting from the end, as a sequence's index is."""
        rank = index + self.moments.n if index < 0 else index
        if not 0 <= rank < self.moments.n:
            raise IndexError(rank)
        return rank

    def bracket(self, index: int) -> tuple[float, float]:
        """Where the index-th smallest value certainly lies: its bucket's edges, within [min, max];
        the smallest and largest exactly. The rank lookup is Buckets' (metrics.rollups.buckets)."""
        n = self.moments.n
        index = self._rank(index)
        if index == 0:
            return self.moments.min, self.moments.min
        if index == n - 1:
            return self.moments.max, self.moments.max
        if self._edges is None:
            self._edges = self._as_buckets()
        low, high = self._edges.bracket(index)
        return max(low, self.moments.min), min(high, self.moments.max)

    def bound(self, fraction: float) -> tuple[float, float]:
        """Where the exact percentile_cont at `fraction` certainly lies."""
        from metrics.rollups.buckets import quantile_bound

        return quantile_bound(self, fraction)

    def ranges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every bucket's closed range of values (within [min, max]) and count, ascending."""
        if self._edges is None:
            self._edges = self._as_buckets()
        low, high, counts = self._edges.ranges()
        return np.maximum(low, self.moments.min), np.minimum(high, self.moments.max), counts

    def _as_buckets(self) -> Buckets:
        """Every bucket as the closed range of values it can hold: magnitudes in (γ^(k−1), γ^k]."""
        from metrics.rollups.buckets import Buckets

        lows, highs, counts = [], [], []
        for key in sorted(self.negative, reverse=True):
            lows.append(-(GAMMA**key) * (1 + EDGE_SLACK))
            highs.append(-(GAMMA ** (key - 1)) * (1 - EDGE_SLACK))
            counts.append(self.negative[key])
        if self.zeros:
            lows.append(0.0)
            highs.append(0.0)
            counts.append(self.zeros)
        for key in sorted(self.positive):
            lows.append(GAMMA ** (key - 1) * (1 - EDGE_SLACK))
            highs.append(GAMMA**key * (1 + EDGE_SLACK))
            counts.append(self.positive[key])
        return Buckets(lows=lows, highs=highs, counts=counts)

    def __getitem__(self, index: int) -> float:
        """The index-th smallest value (0-based, negative from the end), within ACCURACY; min and max exact."""
        n = self.moments.n
        index = self._rank(index)
        if index == 0:
            return self.moments.min
        if index == n - 1:
            return self.moments.max
        if self._cumulative is None:
            values, counts = self.grouped()
            self._cumulative = (np.cumsum(counts).tolist(), values.tolist())
        ends, representatives = self._cumulative
        value = representatives[bisect_right(ends, index)]
        # The true value lies in [min, max]: clamping can only bring the representative closer.
        return min(max(value, self.moments.min), self.moments.max)
