"""OTLP histogram points as bucket counts: read, subtracted (cumulative → delta) and laid out as ranges.

A point's buckets are `{bucket id: count}` under a layout: ("explicit", bounds…) or ("exponential",
scale, zero_threshold). Ids are text so the state survives JSON (metrics.models.OtlpStream): an
explicit bucket is its index; an exponential one "p<i>", "n<i>" or "z". Two points of one stream
subtract bucket by bucket when their layouts agree; an exponential histogram whose scale went down
(the SDK rescales a cumulative stream as its range grows) is first brought to the coarser scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.proto.metrics.v1.metrics_pb2 import ExponentialHistogramDataPoint, HistogramDataPoint

Layout = tuple[Any, ...]


def histogram_problem(histogram: Histogram) -> str:
    """Why a histogram point cannot be stored as its buckets ('' when it can)."""
    counted = sum(histogram.buckets.values())
    if counted != histogram.count:
        return f"the histogram's buckets hold {counted} values but its count is {histogram.count}."
    bounds = histogram.layout[1] if histogram.layout[0] == "explicit" else ()
    if any(not math.isfinite(b) for b in bounds) or list(bounds) != sorted(set(bounds)):
        return "the histogram's explicit bounds must be finite and strictly increasing."
    if histogram.layout[0] == "explicit" and any(int(b) > len(bounds) for b in histogram.buckets):
        return "the histogram has more bucket counts than its bounds allow."
    return ""


@dataclass(frozen=True)
class Histogram:
    count: int
    sum: float
    layout: Layout
    buckets: dict[str, int]
    # Every value of the point lies in [min, max]: its extremes as sent, or (after a subtraction)
    # the running extremes of the stream, which still bound the values recorded in between.
    min: float | None = None
    max: float | None = None
    # The OTLP stream it belongs to: two attribute sets of one metric may export at the same moment.
    stream: str = ""

    @property
    def mean(self) -> float:
        return self.sum / self.count

    def as_state(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "sum": self.sum,
            "min": self.min,
            "max": self.max,
            "layout": list(self.layout),
            "buckets": self.buckets,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Histogram:
        layout = tuple(tuple(x) if isinstance(x, list) else x for x in state["layout"])
        return cls(state["count"], state["sum"], layout, dict(state["buckets"]), state["min"], state["max"])

    def ranges(self, factor: float = 1.0) -> tuple[list[float], list[float], list[int]]:
        """(lows, highs, counts) of the buckets with a count, in the unit `factor` converts to, each
        range narrowed to [min, max] where those are known."""
        lows, highs, counts = [], [], []
        floor = -math.inf if self.min is None else self.min
        ceiling = math.inf if self.max is None else self.max
        for bucket, count in sorted(self.buckets.items(), key=lambda item: _edges(self.layout, item[0])):
            if count <= 0:
                continue
            edges = _edges(self.layout, bucket)
            low, high = max(edges[0], floor), min(edges[1], ceiling)
            if low > high:  # min/max disagree with the buckets: the buckets alone are sure
                low, high = edges
            lows.append(low * factor)
            highs.append(high * factor)
            counts.append(count)
        return lows, highs, counts


def histogram_explicit(point: HistogramDataPoint) -> Histogram:
    bounds = tuple(float(b) for b in point.explicit_bounds)
    buckets = {str(i): int(c) for i, c in enumerate(point.bucket_counts) if c}
    if not point.bucket_counts:  # a count and a sum only: one bucket, bounded by min and max if sent
        bounds, buckets = (), {"0": int(point.count)}
    return Histogram(
        int(point.count),
        float(point.sum),
        ("explicit", bounds),
        buckets,
        float(point.min) if point.HasField("min") else None,
        float(point.max) if point.HasField("max") else None,
    )


def histogram_exponential(point: ExponentialHistogramDataPoint) -> Histogram:
    buckets: dict[str, int] = {}
    for sign, side in (("p", point.positive), ("n", point.negative)):
        for i, count in enumerate(side.bucket_counts):
            if count:
                buckets[f"{sign}{side.offset + i}"] = int(count)
    if point.zero_count:
        buckets["z"] = int(point.zero_count)
    return Histogram(
        int(point.count),
        float(point.sum),
        ("exponential", int(point.scale), float(point.zero_threshold)),
        buckets,
        float(point.min) if point.HasField("min") else None,
        float(point.max) if point.HasField("max") else None,
    )


def _edges(layout: Layout, bucket: str) -> tuple[float, float]:
    """The closed range holding every value of the bucket."""
    if layout[0] == "explicit":
        bounds, index = layout[1], int(bucket)
        low = bounds[index - 1] if index > 0 else -math.inf
        high = bounds[index] if index < len(bounds) else math.inf
        return low, high
    scale, zero_threshold = layout[1], layout[2]
    if bucket == "z":
        return -zero_threshold, zero_threshold
    index = int(bucket[1:])
    low, high = _power(index, scale), _power(index + 1, scale)
    return (low, high) if bucket[0] == "p" else (-high, -low)


def _power(index: int, scale: int) -> float:
    """base ** index for base = 2 ** (2 ** -scale): the lower edge of positive bucket `index`."""
    try:
        return float(2.0 ** (index / 2.0**scale))
    except OverflowError:
        return math.inf


def _coarser(histogram: Histogram, scale: int) -> Histogram:
    """The exponential histogram at a lower scale: 2^(s − scale) buckets merge into one."""
    shift = histogram.layout[1] - scale
    buckets: dict[str, int] = {}
    for bucket, count in histogram.buckets.items():
        key = bucket if bucket == "z" else f"{bucket[0]}{int(bucket[1:]) >> shift}"
        buckets[key] = buckets.get(key, 0) + count
    return replace(histogram, layout=("exponential", scale, histogram.layout[2]), buckets=buckets)


def histogram_delta(current: Histogram, previous: Histogram) -> Histogram | None:
    """current − previous of one cumulative stream, or None when they do not subtract (a reset: a
    count or a bucket went down, the layout changed). min and max become bounds, exact only where the
    running extreme moved (that value was recorded in between)."""
    if current.layout[0] == previous.layout[0] == "exponential" and current.layout[2] == previous.layout[2]:
        scale = min(current.layout[1], previous.layout[1])
        current, previous = _coarser(current, scale), _coarser(previous, scale)
    if current.layout != previous.layout or current.count < previous.count:
        return None
    buckets = {}
    for bucket in current.buckets.keys() | previous.buckets.keys():
        count = current.buckets.get(bucket, 0) - previous.buckets.get(bucket, 0)
        if count < 0:
            return None
        if count:
            buckets[bucket] = count
    if sum(buckets.values()) != current.count - previous.count:
        return None
    return Histogram(
        current.count - previous.count,
        current.sum - previous.sum,
        current.layout,
        buckets,
        current.min,
        current.max,
        current.stream,
    )
