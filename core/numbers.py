"""Numbers as people read them: a few significant digits, tiny p-values as a bound."""

from __future__ import annotations

# Below this a p-value's digits are noise from the normal approximation, not information.
P_FLOOR, P_FLOOR_TEXT = 1e-6, "< 1e-6"


def sig(value: float | None, digits: int = 3) -> str:
    """`value` to `digits` significant digits, without exponent for everyday magnitudes."""
    if value is None:
        return "—"
    if value == 0:
        return "0"
    if 1e-4 <= abs(value) < 1e6:
        text = f"{value:.{digits}g}"
        if "e" in text:  # e.g. 1.23e+03 for digits < magnitude: write it out instead
            text = f"{value:.0f}"
        return text
    return f"{value:.{digits}g}"


def p_value(value: float | None) -> str:
    if value is None:
        return "—"
    if value < P_FLOOR:
        return P_FLOOR_TEXT
    return sig(value, 2)


def p_statement(value: float) -> str:
    """ "p = 0.012", or "p < 1e-6" below the floor."""
    text = p_value(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def effect(relative_performance: float | None) -> str:
    """The one way the tracker says an effect: "candidate 24 % better" (issue 29).

    `relative_performance` is > 1 when the candidate is better, whichever way the metric points, so
    the words never need the metric's direction; the ratio and the raw change go in the details.
    """
    if relative_performance is None or relative_performance <= 0:
        return "no effect to state"
    change = (relative_performance - 1) * 100
    if abs(change) < 0.05:
        return "candidate level with baseline"
    return f"candidate {sig(abs(change), 2)} % {'better' if change > 0 else 'worse'}"


def effect_range(interval: tuple[float, float] | list[float] | None) -> str:
    """An interval of relative performance in the same words: "14 – 31 % better",
    "3 % worse – 12 % better" when it spans no change."""
    if not interval:
        return "no interval"
    low, high = (float(v) for v in interval)

    def side(value: float) -> tuple[str, str]:
        change = (value - 1) * 100
        return sig(abs(change), 2), "better" if change >= 0 else "worse"

    (low_n, low_w), (high_n, high_w) = side(low), side(high)
    if low_w == high_w:
        # the smaller change first: "14 – 31 % better", "12 – 30 % worse"
        first, second = (low_n, high_n) if low_w == "better" else (high_n, low_n)
        return f"{first} – {second} % {low_w}"
    return f"{low_n} % {low_w} – {high_n} % {high_w}"
