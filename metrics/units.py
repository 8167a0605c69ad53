"""Units through pint, with the project's own countable units defined once."""

from __future__ import annotations

from functools import lru_cache

import pint

registry: pint.UnitRegistry[float] = pint.UnitRegistry(autoconvert_offset_to_baseunit=False)
# Countable things of ML systems; each is its own dimension so token/s never converts to sample/s.
registry.define("token = [token]")
registry.define("sample = [sample]")
registry.define("request = [request]")
registry.define("step = [step]")
registry.define("GPU_hour = [gpu_time] = gpu_hour")
registry.define("USD = [currency]")


class UnitError(ValueError):
    pass


@lru_cache(maxsize=512)
def unit_parse(text: str) -> pint.Unit:
    """The pint unit for `text`, or UnitError with a message a person can act on."""
    if not isinstance(text, str) or not text.strip():
        raise UnitError("A unit is required, e.g. 'ms', 'token/s', 'percent'.")
    try:
        unit = registry.parse_units(text.strip())
    except (
        pint.errors.UndefinedUnitError,
        pint.errors.DefinitionSyntaxError,
        AttributeError,
        TypeError,
    ) as exc:
        raise UnitError(f"'{text}' is not a known unit.") from exc
    except Exception as exc:  # pint raises a handful of parser errors for garbage input
        raise UnitError(f"'{text}' is not a known unit.") from exc
    return unit


def unit_dimension(text: str) -> str:
    """A canonical text of the unit's dimensionality, e.g. '[time]' or '[token] / [time]'."""
    return str(registry.Quantity(1, unit_parse(text)).dimensionality)


@lru_cache(maxsize=2048)
def unit_factor(from_unit: str, to_unit: str) -> float:
    """Multiplier taking a value in `from_unit` to `to_unit`; UnitError naming both when impossible."""
    source, target = unit_parse(from_unit), unit_parse(to_unit)
    try:
        return float(registry.Quantity(1.0, source).to(target).magnitude)
    except pint.errors.DimensionalityError as exc:
        raise UnitError(f"'{from_unit}' cannot be converted to the definition's unit '{to_unit}'.") from exc
    except pint.errors.OffsetUnitCalculusError as exc:
        raise UnitError(f"'{from_unit}' has an offset and cannot be converted to '{to_unit}'.") from exc


# Durations, counts of things and GPU time, and any rate or product of them (token/s, 1/hour), are
# never negative. Money, temperature, percentages and plain ratios can be, so they get no default bound.
NEVER_NEGATIVE_DIMENSIONS = frozenset({"[time]", "[token]", "[sample]", "[request]", "[step]", "[gpu_time]"})


def never_negative(text: str) -> bool:
    """Whether a quantity in this unit cannot be below zero (UnitError for an unknown unit)."""
    dimensions = registry.Quantity(1, unit_parse(text)).dimensionality
    return bool(dimensions) and set(dimensions) <= NEVER_NEGATIVE_DIMENSIONS


def value_in_unit(value: float, from_unit: str, to_unit: str) -> float:
    """`value` (in `from_unit`) in `to_unit`: the value itself when the two are the same text, else
    through pint's factor (UnitError when they do not convert)."""
    return value if from_unit == to_unit else value * unit_factor(from_unit, to_unit)
