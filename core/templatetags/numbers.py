"""{% load numbers %}: `|sig` (3 significant digits, or `|sig:4`), `|percent` (a fraction as a
percentage, 0.001 → "0.1"), `|pvalue` ("< 1e-6" below the floor)
`|p_statement` ("p = 0.012" or "p < 1e-6") and `|interval` (a two-number interval as "a – b"), `|effect` ("candidate 24 % better", from a
relative performance) and `|effect_range` (its interval in the same words)."""

from __future__ import annotations

from collections.abc import Sequence

from django import template

from core import numbers

register = template.Library()


@register.filter
def sig(value: float | None, digits: int | str = 3) -> str:
    return numbers.sig(value, int(digits))


@register.filter
def percent(value: float | None, digits: int | str = 2) -> str:
    return numbers.sig(None if value is None else value * 100, int(digits))


@register.filter
def pvalue(value: float | None) -> str:
    return numbers.p_value(value)


@register.filter
def p_statement(value: float) -> str:
    return numbers.p_statement(value)


@register.filter
def interval(value: Sequence[float] | None, digits: int | str = 3) -> str:
    if not value:
        return "no interval"
    low, high = value
    return f"{numbers.sig(low, int(digits))} – {numbers.sig(high, int(digits))}"


@register.filter
def effect(value: float | None) -> str:
    return numbers.effect(value)


@register.filter
def effect_range(value: Sequence[float] | None) -> str:
    return numbers.effect_range(value)  # type: ignore[arg-type]
