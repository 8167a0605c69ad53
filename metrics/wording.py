"""The comparison in one sentence that reads right whichever way the metric points."""

from __future__ import annotations

from functools import lru_cache

from core.numbers import sig
from metrics.inference import QUANTILES, order_statistic_ranks

METHODS = {
    "order-statistic": "order-statistic interval per side (distribution-free), log-ratio interval (MOVER)",
    "welch-fieller": "t-interval per side, Welch's t-test, Fieller's interval for the ratio of means",
    "mann-whitney": "Mann–Whitney U, one-sided in each direction (a whole-distribution shift)",
    "none": "no inference (min and max have no interval)",
}

# What each method means for someone deciding, in one plain line (issue 29: method names stay in the
# details, each with its meaning). Keyed as METHODS.
METHOD_MEANINGS = {
    "order-statistic": "compares percentiles without assuming any shape of the data; the interval is "
    "how far the true ratio could plausibly be from the one measured",
    "welch-fieller": "compares averages, allowing each side its own spread; the interval is where the "
    "true ratio of the averages lies, at the stated confidence",
    "mann-whitney": "asks whether candidate values tend to beat baseline values across the whole "
    "distribution, not just one statistic",
    "none": "these statistics are reported as measured: there is no interval to say how sure they are",
}


def method_meaning(method: str) -> str:
    """The plain meaning of a comparison's `method` ("" for one not listed)."""
    base = next((name for name in METHOD_MEANINGS if method.startswith(name)), None)
    return METHOD_MEANINGS[base] if base else ""


def method_described(method: str) -> str:
    """A comparison's `method` in words: the statistical method's, then which read answered it
    (metrics.selectors.comparison.compute: " (rollups)", " (rows: the rollups could not tell)", …)."""
    base = next((name for name in METHODS if method.startswith(name)), None)
    return METHODS[base] + method[len(base) :] if base else method


def comparison_sentence(
    *, statistic: str, direction: str | None, baseline: float | None, candidate: float | None
) -> str:
    """E.g. "candidate p95 is 0.785× the baseline's — 21.5 % lower, which is better for this metric".

    The ratio here is the plain candidate / baseline of the values; whether that is good is said in
    words, from the metric's direction. For `distribution` the values are the medians.
    """
    name = "median" if statistic == "distribution" else statistic
    if baseline is None or candidate is None or direction is None:
        return ""
    if baseline <= 0 or candidate < 0:
        return f"candidate {name} is {sig(candidate)} against the baseline's {sig(baseline)}."
    ratio = candidate / baseline
    if ratio == 1:
        return f"candidate {name} equals the baseline's."
    change = abs(ratio - 1) * 100
    lower = ratio < 1
    good = lower == (direction == "lower_is_better")
    return (
        f"candidate {name} is {sig(ratio)}× the baseline's — {sig(change)} % "
        f"{'lower' if lower else 'higher'}, which is {'better' if good else 'worse'} for this metric"
        f" ({'lower' if direction == 'lower_is_better' else 'higher'} is better)."
    )


# Each method's named parts, each with what it means in a line (the comparison page's details).
METHOD_PARTS = {
    "order-statistic": [
        (
            "Order-statistic interval",
            "each side's quantile lies between two of its sorted values, whatever the distribution's shape",
        ),
        ("MOVER", "combines the two sides' intervals into one interval for their ratio"),
    ],
    "welch-fieller": [
        ("t-interval", "where each side's true mean lies, from its spread and its number of observations"),
        ("Welch's t-test", "whether the means differ, without assuming the two sides spread alike"),
        ("Fieller's interval", "where the ratio of the two means lies"),
    ],
    "mann-whitney": [
        (
            "Mann–Whitney U",
            "whether a candidate observation tends to beat a baseline one (the whole distribution, not one statistic)",
        ),
    ],
    "none": [("No inference", "min and max are single extreme values: there is no interval to give")],
}
VERDICT_WORDS = {"better": "better", "worse": "worse", "no_difference": "no difference shown"}


def method_parts(method: str) -> list[tuple[str, str]]:
    base = next((name for name in METHOD_PARTS if method.startswith(name)), None)
    return METHOD_PARTS[base] if base else []


def samples_needed(statistic: str, *, alpha: float, min_samples: int) -> int:
    """Observations each side needs before a verdict can be given: the comparison's `min_samples`, or
    more where the statistic's interval needs more (an order-statistic interval of p95 needs the
    sample to reach past its 95th percentile at both ranks: 72 at α = 0.05, 367 for p99)."""
    fraction = QUANTILES.get(statistic)
    if fraction is None:
        return min_samples
    return max(min_samples, _order_statistic_minimum(fraction, alpha))


@lru_cache(maxsize=64)
def _order_statistic_minimum(fraction: float, alpha: float) -> int:
    """The smallest n with an order-statistic interval (once per quantile and α: cached)."""
    n = 2
    while order_statistic_ranks(n, fraction, alpha) is None and n < 100_000:
        n += 1
    return n


def verdict_words(
    *, verdict: str, statistic: str, baseline_n: int, candidate_n: int, alpha: float, min_samples: int
) -> str:
    """The badge in words: "better", "no difference shown", "not enough data: 40 of 72 needed for a
    p95 interval", never a raw `insufficient_data`."""
    if verdict in VERDICT_WORDS:
        return VERDICT_WORDS[verdict]
    if statistic in ("min", "max"):
        return f"no verdict: {statistic} has no interval"
    needed = samples_needed(statistic, alpha=alpha, min_samples=min_samples)
    have = min(baseline_n, candidate_n)
    if have < needed:
        what = "a distribution test" if statistic == "distribution" else f"a {statistic} interval"
        return f"not enough data: {have} of {needed} needed for {what}"
    return "cannot tell yet"
