"""Dates read as people say them, with the ISO moment on hover (core.dates, `|when`)."""

from __future__ import annotations

from datetime import UTC, datetime
from unittest import mock

from django.template import Context, Template

from core.dates import when_words

NOW = datetime(2026, 12, 3, 16, 30, tzinfo=UTC)


def test_today_and_yesterday_keep_the_minute():
    assert when_words(datetime(2026, 12, 3, 14, 5, tzinfo=UTC), NOW) == "today 14:05 UTC"
    assert when_words(datetime(2026, 12, 2, 9, 10, tzinfo=UTC), NOW) == "yesterday 09:10 UTC"
    assert when_words(datetime(2026, 12, 4, 8, 0, tzinfo=UTC), NOW) == "tomorrow 08:00 UTC"


def test_older_days_by_day_and_month_and_other_years_with_the_year():
    assert when_words(datetime(2026, 11, 30, 23, 59, tzinfo=UTC), NOW) == "30 Nov"
    assert when_words(datetime(2026, 1, 3, 10, 0, tzinfo=UTC), NOW) == "3 Jan"
    assert when_words(datetime(2025, 12, 3, 10, 0, tzinfo=UTC), NOW) == "3 Dec 2025"


def test_days_turn_at_midnight_utc_whatever_the_zone_given():
    from zoneinfo import ZoneInfo

    late_yesterday = datetime(2026, 12, 3, 1, 0, tzinfo=ZoneInfo("Europe/Berlin"))  # 00:00 UTC on the 3rd
    assert when_words(late_yesterday, NOW) == "today 00:00 UTC"


def test_the_filter_puts_the_iso_moment_in_datetime_and_title():
    moment = datetime(2026, 12, 3, 14, 5, tzinfo=UTC)
    with mock.patch("core.templatetags.dates.timezone.now", return_value=NOW):
        html = Template("{% load dates %}{{ moment|when }}|{{ nothing|when }}").render(
            Context({"moment": moment, "nothing": None})
        )
    assert html == (
        '<time datetime="2026-12-03T14:05:00+00:00" title="2026-12-03 14:05 UTC">today 14:05 UTC</time>|–'
    )
