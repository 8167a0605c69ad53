"""A sample some of whose values are known only as a bucket (OTLP histogram points), for metrics.inference.

Each value lies in a known closed range [low, high]: a bucket of a histogram point (narrowed to the
point's min and max), or a single exact value (low = high). Whatever the values are, the r-th
smallest of them lies between the r-th smallest low and the r-th smallest high (values are at least
their lows, one by one, so their order statistics are too; likewise for the highs). That bracket is
certain, so:

- `bracket(i)` is where the i-th smallest value lies; an order-statistic interval takes the lower end
  of its lower rank's bracket and the upper end of its upper rank's: never narrower than the truth.
- `s[i]` is the bracket's midpoint, within half its width of the true value; a quantile interpolated
  between two ranks is within half the interpolated bracket's width (`bound`).
- The mean is exact (the points' sums); the variance is the buckets' midpoints' around it.

Like a rollup Sketch it quacks like the sorted array `metrics.inference` reads: len(), [i], `moments`
and `grouped()` (midpoints and counts, for Mann–Whitney U).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike

from metrics.rollups.sketch import Moments


@dataclass
class Buckets:
    lows: list[float] = field(default_factory=list)
    highs: list[float] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    total: float = 0.0  # the sum of every value (exact: the points' sums)
    _ranks: tuple[list[int], list[float], list[int], list[float]] | None = field(default=None, repr=False)
    _moments: Moments | None = field(default=None, repr=False)

    def add_values(self, values: ArrayLike) -> None:
        x = np.asarray(values, dtype=float).tolist()
        self.lows += x
        self.highs += x
        self.counts += [1] * len(x)
        self.total += float(sum(x))
        self._ranks = self._moments = None

    def add_point(self, total: float, lows: list[float], highs: list[float], counts: list[int]) -> None:
        self.lows += lows
        self.highs += highs
        self.counts += counts
        self.total += total
        self._ranks = self._moments = None

    def __len__(self) -> int:
        return sum(self.counts)

    def _cumulative(self) -> tuple[list[int], list[float], list[int], list[float]]:
        if self._ranks is None:
            counts = np.asarray(self.counts, dtype=np.int64)
            by_low, by_high = np.argsort(self.lows, kind="stable"), np.argsort(self.highs, kind="stable")
            self._ranks = (
                np.cumsum(counts[by_low]).tolist(),
                np.asarray(self.lows)[by_low].tolist(),
                np.cumsum(counts[by_high]).tolist(),
                np.asarray(self.highs)[by_high].tolist(),
            )
        return self._ranks

    def bracket(self, index: int) -> tuple[float, float]:
        """Where the index-th smallest value (0-based, negative from the end) certainly lies."""
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        low_ends, lows, high_ends, highs = self._cumulative()
        return lows[bisect_right(low_ends, index)], highs[bisect_right(high_ends, index)]

    def __getitem__(self, index: int) -> float:
        return _middle(*self.bracket(index))

    def bound(self, fraction: float) -> tuple[float, float]:
        """Where the percentile_cont at `fraction` of the true values certainly lies."""
        return quantile_bound(self, fraction)

    def ranges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every value's closed range and count, (lows, highs, counts): what Mann–Whitney's bounds read."""
        return np.asarray(self.lows, float), np.asarray(self.highs, float), np.asarray(self.counts, np.int64)

    def grouped(self) -> tuple[np.ndarray, np.ndarray]:
        """Ascending bucket midpoints and their counts: the sample as the buckets know it."""
        middles = np.asarray([_middle(lo, hi) for lo, hi in zip(self.lows, self.highs, strict=True)])
        order = np.argsort(middles, kind="stable")
        return middles[order], np.asarray(self.counts, dtype=np.int64)[order]

    @property
    def moments(self) -> Moments:
        if self._moments is None:
            n = len(self)
            moments = Moments()
            if n:
                values, counts = self.grouped()
                mean = self.total / n
                m2 = float((counts * (values - mean) ** 2).sum())
                moments.add(n, self.total, m2, float(min(self.lows)), float(max(self.highs)))
            self._moments = moments
        return self._moments


class Bracketed(Protocol):
    """A sample whose i-th smallest value is known to lie in a closed range (Buckets, a rollup Sketch)."""

    def __len__(self) -> int: ...

    def bracket(self, index: int) -> tuple[float, float]: ...


def quantile_bound(sample: Bracketed, fraction: float) -> tuple[float, float]:
    """Where the percentile_cont at `fraction` of the true values certainly lies: the interpolation
    of the two ranks' brackets, end by end (each end is monotone in the values it interpolates)."""
    position = fraction * (len(sample) - 1)
    low, high = math.floor(position), math.ceil(position)
    (a, b), (c, d) = sample.bracket(low), sample.bracket(high)
    return _lerp(a, c, position - low), _lerp(b, d, position - low)


def _lerp(start: float, end: float, share: float) -> float:
    """percentile_cont's interpolation, where an open end stays open."""
    if not share or start == end:
        return start
    if math.isinf(start) or math.isinf(end):
        return start if math.isinf(start) else end
    return start + share * (end - start)


def _middle(low: float, high: float) -> float:
    """The value standing for a range: its midpoint, or its finite end when the other is open."""
    if math.isinf(low):
        return high
    if math.isinf(high):
        return low
    return (low + high) / 2


def relative_bound(brackets: list[tuple[float, float]]) -> float | None:
    """The largest relative error of a midpoint over these brackets: half a width over the smallest
    magnitude in the bracket; None when one holds zero or is open (no relative bound exists)."""
    worst = 0.0
    for low, high in brackets:
        if math.isinf(low) or math.isinf(high) or low <= 0 <= high:
            return None
        worst = max(worst, (high - low) / 2 / min(abs(low), abs(high)))
    return worst
