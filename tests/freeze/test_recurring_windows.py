"""Recurring freeze windows (issue 12 §3): an RRULE in an IANA timezone, occurrences of wall-clock
length, expanded by the check; bad rules, timezones and durations are 400s naming the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from freeze import recurrence
from freeze.models import FreezeWindow
from tests.freeze.factories import freeze_setup

WINDOWS = "/api/v1/freeze/windows/"
CHECK = "/api/v1/freeze/check/"


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def create(client, **fields):
    payload = {
        "program": "rebuild",
        "name": "Recurring",
        "starts_at": "2030-01-04T18:00:00+01:00",
        "ends_at": "2031-01-01T00:00:00Z",
        "default_level": "frozen",
        **fields,
    }
    return client.post(WINDOWS, payload, format="json")


def decision(client, at: datetime) -> dict:
    return client.get(CHECK, {"component": "trainer", "at": at.isoformat(), "program": "rebuild"}).json()


@pytest.fixture
def weekend(as_user, lead, ref):
    """Frozen Friday 18:00 to Monday 08:00, Berlin wall-clock time, all of 2030."""
    response = create(
        as_user(lead),
        name="Weekend freeze",
        rrule="FREQ=WEEKLY;BYDAY=FR",
        timezone="Europe/Berlin",
        occurrence_duration="2 14:00:00",
    )
    assert response.status_code == 201, response.content
    return FreezeWindow.objects.get(pk=response.json()["id"])


def test_weekend_window_is_in_force_on_weekends_only(as_user, viewer, weekend):
    client = as_user(viewer)
    assert decision(client, utc(2030, 2, 9, 12))["decision"] == "forbidden"  # Saturday
    assert decision(client, utc(2030, 2, 13, 12))["decision"] == "allowed"  # Wednesday
    body = decision(client, utc(2030, 2, 10, 12))  # Sunday
    [found] = body["windows"]
    assert found["recurring"] is True
    assert (found["starts_at"], found["ends_at"]) == ("2030-02-08T17:00:00Z", "2030-02-11T07:00:00Z")


def test_weekend_follows_the_wall_clock_across_dst(as_user, viewer, weekend):
    client = as_user(viewer)
    # Winter (CET, UTC+1): Friday 18:00 is 17:00 UTC.
    assert decision(client, utc(2030, 2, 8, 16, 30))["decision"] == "allowed"
    assert decision(client, utc(2030, 2, 8, 17, 30))["decision"] == "forbidden"
    # Summer (CEST, UTC+2): Friday 18:00 is 16:00 UTC.
    assert decision(client, utc(2030, 4, 12, 16, 30))["decision"] == "forbidden"
    # The weekend DST starts (Sunday 31 March 2030): Monday 08:00 CEST is 06:00 UTC, not 07:00.
    assert decision(client, utc(2030, 4, 1, 5, 30))["decision"] == "forbidden"
    assert decision(client, utc(2030, 4, 1, 6, 30))["decision"] == "allowed"


def test_new_york_autumn_weekend_ends_on_local_time(db, lead, ref):
    """US DST ends Sunday 3 November 2030: the Monday 08:00 EST end is 13:00 UTC."""
    window = FreezeWindow.objects.create(
        program=ref["program"],
        name="NY weekend",
        starts_at=utc(2030, 1, 4, 23),  # Friday 18:00 EST
        ends_at=utc(2031, 1, 1),
        rrule="FREQ=WEEKLY;BYDAY=FR",
        timezone="America/New_York",
        occurrence_duration=timedelta(days=2, hours=14),
    )
    assert recurrence.occurrence_at(window, utc(2030, 11, 1, 22, 30)) == (
        utc(2030, 11, 1, 22),
        utc(2030, 11, 4, 13),
    )
    assert window.contains(utc(2030, 11, 4, 12, 30))
    assert not window.contains(utc(2030, 11, 4, 13, 30))


def test_last_week_of_each_quarter(as_user, lead, viewer, ref):
    response = create(
        as_user(lead),
        name="Quarter-end freeze",
        starts_at="2030-03-25T00:00:00Z",
        rrule="RRULE:FREQ=MONTHLY;BYMONTH=3,6,9,12;BYMONTHDAY=-7",
        timezone="UTC",
        occurrence_duration="7 00:00:00",
    )
    assert response.status_code == 201, response.content
    client = as_user(viewer)
    assert decision(client, utc(2030, 6, 24, 0))["decision"] == "forbidden"
    assert decision(client, utc(2030, 6, 30, 23, 59))["decision"] == "forbidden"
    assert decision(client, utc(2030, 7, 1, 0))["decision"] == "allowed"
    assert decision(client, utc(2030, 6, 23, 23))["decision"] == "allowed"
    assert decision(client, utc(2030, 9, 30, 12))["decision"] == "forbidden"
    assert decision(client, utc(2030, 11, 30, 12))["decision"] == "allowed"


def test_occurrences_stop_at_the_season_s_end(db, ref):
    window = FreezeWindow.objects.create(
        program=ref["program"],
        name="Short season",
        starts_at=utc(2030, 1, 5),
        ends_at=utc(2030, 1, 6, 12),
        rrule="FREQ=DAILY",
        occurrence_duration=timedelta(hours=20),
    )
    assert window.occurrence_at(utc(2030, 1, 6, 11)) == (utc(2030, 1, 6), utc(2030, 1, 6, 12))
    assert window.occurrence_at(utc(2030, 1, 6, 13)) is None
    assert recurrence.next_occurrence(window, utc(2030, 1, 5, 21)) == (utc(2030, 1, 6), utc(2030, 1, 6, 12))


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"rrule": "FREQ=SOMETIMES", "occurrence_duration": "1 00:00:00"}, "rrule"),
        ({"rrule": "weekends", "occurrence_duration": "1 00:00:00"}, "rrule"),
        ({"rrule": "FREQ=HOURLY", "occurrence_duration": "00:30:00"}, "rrule"),
        ({"rrule": "FREQ=WEEKLY;UNTIL=20301231T000000", "occurrence_duration": "1 00:00:00"}, "rrule"),
        ({"rrule": "DTSTART:20300101T000000Z\nRRULE:FREQ=DAILY", "occurrence_duration": "01:00:00"}, "rrule"),
        (
            {"rrule": "FREQ=WEEKLY", "timezone": "Mars/Olympus", "occurrence_duration": "1 00:00:00"},
            "timezone",
        ),
        ({"timezone": "not a zone"}, "timezone"),
        ({"rrule": "FREQ=WEEKLY"}, "occurrence_duration"),
        ({"occurrence_duration": "1 00:00:00"}, "occurrence_duration"),
    ],
)
def test_bad_recurrence_is_a_400_naming_the_field(as_user, lead, ref, fields, field):
    response = create(as_user(lead), **fields)
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == field
    assert not FreezeWindow.objects.filter(name="Recurring").exists()


def test_utc_until_is_accepted(as_user, lead, ref):
    response = create(
        as_user(lead), rrule="FREQ=WEEKLY;UNTIL=20300301T000000Z", occurrence_duration="1 00:00:00"
    )
    assert response.status_code == 201, response.content
    assert response.json()["rrule"] == "FREQ=WEEKLY;UNTIL=20300301T000000Z"
    assert response.json()["timezone"] == "UTC"


def test_command_shows_the_occurrence_in_utc(weekend):
    import io

    from django.core.management import call_command

    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("freeze_check", "trainer", "--at", "2030-04-13T12:00:00Z", stdout=out)
    assert (
        "Weekend freeze [rebuild, recurring] 2030-04-12 16:00 – 2030-04-15 06:00 UTC: frozen"
        in out.getvalue()
    )


def test_freeze_list_column_shows_the_occurrence_in_force_not_the_season(client, viewer, lead, as_user, ref):
    from django.utils import timezone

    today = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    response = create(
        as_user(lead),
        name="Daily freeze",
        starts_at=(today - timedelta(days=10)).isoformat(),
        ends_at=(today + timedelta(days=60)).isoformat(),
        rrule="FREQ=DAILY",
        timezone="UTC",
        occurrence_duration="1 00:00:00",
    )
    assert response.status_code == 201, response.content
    client.force_login(viewer)
    page = client.get("/freeze/").content.decode()
    tomorrow = today + timedelta(days=1)
    assert f"{today:%-d %b} – {tomorrow:%-d %b} · recurring" in page
    assert f"rebuild · {today - timedelta(days=10):%-d %b} – " not in page  # the header isn't the season
