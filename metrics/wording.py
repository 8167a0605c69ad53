"""The comparison in one sentence that reads right whichever way the metric points."""

from __future__ import annotations

from core.numbers import sig

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
