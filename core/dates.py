"""Dates as people say them: "today 14:05 UTC", "yesterday 09:10 UTC", "3 Dec", "3 Dec 2025".

Pure wording (no Django): the `|when` filter (core.templatetags.dates) wraps it in a <time> element
whose datetime and title carry the ISO moment, so the exact time is one hover away."""

from __future__ import annotations

from datetime import UTC, datetime


def when_words(moment: datetime, now: datetime) -> str:
    """Today and yesterday (and tomorrow, for a deadline) with the minute; other days of this year by
    day and month; other years with the year. Always in UTC, the time the whole site speaks."""
    moment, now = moment.astimezone(UTC), now.astimezone(UTC)
    days = (now.date() - moment.date()).days
    clock = f"{moment:%H:%M} UTC"
    if days == 0:
        return f"today {clock}"
    if days == 1:
        return f"yesterday {clock}"
    if days == -1:
        return f"tomorrow {clock}"
    if moment.year == now.year:
        return f"{moment.day} {moment:%b}"
    return f"{moment.day} {moment:%b %Y}"


def iso_minute(moment: datetime) -> str:
    """The exact moment for the hover title: '2026-12-03 14:05 UTC'."""
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
