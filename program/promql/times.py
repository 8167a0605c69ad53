"""Prometheus' HTTP API times and durations: `start`, `end`, `time` as Unix seconds or RFC 3339, `step`
as seconds or a duration such as `5m` or `1h30m`. The error messages are Prometheus' own. No Django."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

from program.promql.parse import PromQLError

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_DURATION = re.compile(r"(?:(\d+)(ms|s|m|h|d|w|y))+")
_PART = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
# The times a reader can turn into datetimes (years 1 to 9999), a week inside either end: the readers
# floor a time to its hour or UTC day and add a bucket (program.selectors.prometheus), which must not
# step out of what datetime holds. Prometheus itself reads any finite number; nobody charts year 9999.
_MARGIN = timedelta(days=7)
EARLIEST = (datetime.min.replace(tzinfo=UTC) + _MARGIN).timestamp()
LATEST = (datetime.max.replace(tzinfo=UTC) - _MARGIN).timestamp()


def parse_time(value: str, name: str) -> float:
    """Unix seconds (a float) from Unix seconds or RFC 3339, between EARLIEST and LATEST."""
    refused = PromQLError(f'invalid parameter "{name}": cannot parse "{value}" to a valid timestamp')
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = datetime.fromisoformat(value)
            seconds = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
        except ValueError:
            raise refused from None
    if not math.isfinite(seconds) or not EARLIEST <= seconds <= LATEST:
        raise refused
    return seconds


def parse_duration(value: str, name: str) -> float:
    """Seconds from a float or a Prometheus duration (`1h30m`)."""
    try:
        seconds = float(value)
    except ValueError:
        if not _DURATION.fullmatch(value):
            raise PromQLError(
                f'invalid parameter "{name}": cannot parse "{value}" to a valid duration'
            ) from None
        seconds = sum(int(count) * _UNITS[unit] for count, unit in _PART.findall(value))
    if not math.isfinite(seconds):
        raise PromQLError(f'invalid parameter "{name}": cannot parse "{value}" to a valid duration')
    return seconds
