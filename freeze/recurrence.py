"""Recurring freeze windows: an RFC 5545 RRULE (python-dateutil) read in an IANA timezone.

A window's starts_at..ends_at bounds its season. Without a rule the whole season is one span. With
one, occurrences start at the rule's recurrences of starts_at (DTSTART), as wall-clock time in the
window's timezone, and each lasts `occurrence_duration` of wall-clock time: a weekend freeze from
Friday 18:00 to Monday 08:00 Berlin time stays so across a DST change. Occurrences are clipped to
the season. Rules are never expanded in full: the check asks for the last start before a moment.

starts_at and ends_at are stored as instants. Given without a UTC offset they are wall-clock time in
the window's timezone (`wall_clock`): "2030-01-04T18:00" in Europe/Berlin is 17:00 UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from dateutil.rrule import DAILY, rrule, rrulestr

from core.errors import ApplicationError

if TYPE_CHECKING:  # only a type here: freeze.models calls this module from its methods
    from freeze.models import FreezeWindow

# Finer rules (hourly, minutely, secondly) make no sense for a freeze and would make every check
# walk thousands of occurrences: dateutil's before() iterates from DTSTART.
COARSEST_ALLOWED = DAILY
MSG_RULE = "Not an RFC 5545 RRULE ({problem}), e.g. FREQ=WEEKLY;BYDAY=SA,SU."


def zone(name: str) -> ZoneInfo:
    """The IANA zone, or a 400 naming `timezone`."""
    if not name or name not in _zone_names():
        raise ApplicationError(
            f"'{name}' is not an IANA timezone name, e.g. Europe/Berlin or UTC.", status=400, field="timezone"
        )
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:  # pragma: no cover - listed names load
        raise ApplicationError(f"'{name}' cannot be loaded.", status=400, field="timezone") from exc


@lru_cache(maxsize=1)
def _zone_names() -> frozenset[str]:
    return frozenset(available_timezones()) | {"UTC"}


def wall_clock(value: datetime, timezone_name: str, field: str) -> datetime:
    """An aware value as it is; a naive one read as wall-clock time in the zone.

    A time that the clocks skip (02:30 on the night DST starts in Berlin) is a 400 naming `field`; a
    time they pass twice (02:30 the night it ends) is the first of the two, still summer time."""
    if value.tzinfo is not None and value.utcoffset() is not None:
        return value
    local = value.replace(tzinfo=zone(timezone_name), fold=0)
    if local.astimezone(UTC).astimezone(local.tzinfo).replace(tzinfo=None) != value.replace(fold=0):
        raise ApplicationError(
            f"{value:%Y-%m-%d %H:%M} does not exist in {timezone_name}: the clocks skip it (DST starts). "
            "Give a time outside the jump, or a UTC offset.",
            status=400,
            field=field,
        )
    return local.astimezone(UTC)


@lru_cache(maxsize=256)
def _parse(text: str, dtstart: datetime) -> rrule:
    # cache=True: the rule keeps the occurrences it has walked, so the next check at a later moment
    # does not walk them again from DTSTART (a daily rule would, once per day of its season).
    return rrulestr(text, dtstart=dtstart, forceset=False, ignoretz=False, cache=True)


def parse_rule(text: str, starts_at: datetime, timezone_name: str) -> rrule:
    """The rule with DTSTART = starts_at in the window's timezone; a 400 naming `rrule` if bad."""
    local_start = starts_at.astimezone(zone(timezone_name))
    body = text.strip()
    if body.upper().startswith("RRULE:"):
        body = body[len("RRULE:") :]
    if not body or "\n" in body or ":" in body:
        raise ApplicationError(
            MSG_RULE.format(problem="one RRULE line, without DTSTART, RDATE or EXDATE"),
            status=400,
            field="rrule",
        )
    try:
        rule = _parse(body, local_start)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        raise ApplicationError(MSG_RULE.format(problem=exc), status=400, field="rrule") from exc
    if not isinstance(rule, rrule):  # pragma: no cover - forceset=False and one line
        raise ApplicationError(MSG_RULE.format(problem="one rule only"), status=400, field="rrule")
    if rule._freq > COARSEST_ALLOWED:  # YEARLY=0 … DAILY=3 … SECONDLY=6
        raise ApplicationError(
            MSG_RULE.format(problem="a freeze recurs daily at most often"), status=400, field="rrule"
        )
    return rule


def validate(
    *, rrule_text: str, timezone_name: str, occurrence_duration: timedelta | None, starts_at: datetime
) -> None:
    """Refuses (400, naming the field) a bad timezone, rule or duration; an empty rule needs neither."""
    zone(timezone_name)
    if not rrule_text:
        if occurrence_duration is not None:
            raise ApplicationError(
                "Only a recurring window (with an rrule) has an occurrence duration.",
                status=400,
                field="occurrence_duration",
            )
        return
    rule = parse_rule(rrule_text, starts_at, timezone_name)
    if occurrence_duration is None or occurrence_duration <= timedelta(0):
        raise ApplicationError(
            "A recurring window needs a positive occurrence_duration, e.g. 2 days 14:00:00.",
            status=400,
            field="occurrence_duration",
        )
    if rule.after(starts_at.astimezone(zone(timezone_name)), inc=True) is None:
        raise ApplicationError(MSG_RULE.format(problem="it never occurs"), status=400, field="rrule")


def _wall_clock_end(start: datetime, duration: timedelta) -> datetime:
    """start + duration on the wall clock of start's zone (Fri 18:00 + 2 d 14 h = Mon 08:00)."""
    return (start.replace(tzinfo=None) + duration).replace(tzinfo=start.tzinfo)


def _occurrence_end(window: FreezeWindow, start: datetime) -> datetime:
    """A recurring window always has its occurrence_duration: validate() requires it with a rule."""
    assert window.occurrence_duration is not None
    return _wall_clock_end(start, window.occurrence_duration)


def occurrence_at(window: FreezeWindow, moment: datetime) -> tuple[datetime, datetime] | None:
    """The (start, end) of the window's span in force at `moment`, or None."""
    if not (window.starts_at <= moment < window.ends_at):
        return None
    if not window.rrule:
        return window.starts_at, window.ends_at
    rule = parse_rule(window.rrule, window.starts_at, window.timezone)
    # A later start never ends earlier (same wall-clock duration), so the last start decides.
    start = rule.before(moment.astimezone(UTC), inc=True)
    if start is None:
        return None
    end = _occurrence_end(window, start)
    if moment >= end:
        return None
    # In UTC, as every other time the app shows and stores.
    return max(start, window.starts_at).astimezone(UTC), min(end, window.ends_at).astimezone(UTC)


def next_occurrence(window: FreezeWindow, moment: datetime) -> tuple[datetime, datetime] | None:
    """The next span of the window starting after `moment` (for pages and messages)."""
    if moment >= window.ends_at:
        return None
    if not window.rrule:
        return (window.starts_at, window.ends_at) if window.starts_at > moment else None
    start = parse_rule(window.rrule, window.starts_at, window.timezone).after(moment.astimezone(UTC))
    if start is None or start >= window.ends_at:
        return None
    end = min(_occurrence_end(window, start), window.ends_at)
    return start.astimezone(UTC), end.astimezone(UTC)
