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
