"""A freeze window's starts_at without a UTC offset is wall-clock time in its timezone (issue 26, item 7).

A Berlin "Friday 18:00" weekend freeze is 18:00 Berlin time in winter and in summer, and ends Monday
08:00 Berlin time on both weekends the clocks change; the same for Los Angeles."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from freeze.models import FreezeWindow
from tests.freeze.factories import freeze_setup

WINDOWS = "/api/v1/freeze/windows/"
CHECK = "/api/v1/freeze/check/"


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def weekend_window(client, zone: str, **fields: str):
    """Frozen from Friday 18:00 to Monday 08:00 local time, all of 2030, given as naive local times."""
    payload = {
        "program": "rebuild",
        "name": f"Weekend freeze {zone}",
        "starts_at": "2030-01-04T18:00:00",
        "ends_at": "2031-01-01T00:00:00",
        "default_level": "frozen",
        "rrule": "FREQ=WEEKLY;BYDAY=FR",
        "timezone": zone,
        "occurrence_duration": "2 14:00:00",
        **fields,
    }
    return client.post(WINDOWS, payload, format="json")


def frozen_at(client, moment: datetime) -> bool:
    answer = client.get(CHECK, {"component": "trainer", "at": moment.isoformat(), "program": "rebuild"})
    return answer.json()["decision"] == "forbidden"


def test_a_naive_start_is_read_in_the_window_s_timezone_and_shown_both_ways(as_user, lead, ref):
    response = weekend_window(as_user(lead), "Europe/Berlin")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["starts_at"] == "2030-01-04T17:00:00Z"  # 18:00 CET
    assert body["ends_at"] == "2030-12-31T23:00:00Z"
    assert (body["local_starts_at"], body["local_ends_at"]) == ("2030-01-04T18:00:00", "2031-01-01T00:00:00")
    assert FreezeWindow.objects.get(pk=body["id"]).starts_at == utc(2030, 1, 4, 17)


def test_an_offset_still_means_that_instant(as_user, lead, ref):
    response = weekend_window(as_user(lead), "Europe/Berlin", starts_at="2030-01-04T18:00:00Z")
    assert response.status_code == 201, response.content
    assert response.json()["local_starts_at"] == "2030-01-04T19:00:00"


# (zone, last winter Friday 18:00 local in UTC, the following Monday 08:00 local (now summer time) in UTC,
#  last summer Friday 18:00 local in UTC, the following Monday 08:00 local (now winter time) in UTC)
TRANSITIONS = {
    # DST starts Sunday 31 March 2030 and ends Sunday 27 October 2030 in the EU.
    "Europe/Berlin": (utc(2030, 3, 29, 17), utc(2030, 4, 1, 6), utc(2030, 10, 25, 16), utc(2030, 10, 28, 7)),
    # DST starts Sunday 10 March 2030 and ends Sunday 3 November 2030 in the US.
    "America/Los_Angeles": (
        utc(2030, 3, 9, 2),  # Friday 8 March 18:00 PST
        utc(2030, 3, 11, 15),  # Monday 08:00 PDT
        utc(2030, 11, 2, 1),  # Friday 1 November 18:00 PDT
        utc(2030, 11, 4, 16),  # Monday 08:00 PST
    ),
}


@pytest.mark.parametrize("zone", TRANSITIONS)
def test_the_weekend_keeps_local_time_over_both_dst_changes(as_user, lead, viewer, ref, zone):
    assert weekend_window(as_user(lead), zone).status_code == 201
    client = as_user(viewer)
    spring_start, spring_end, autumn_start, autumn_end = TRANSITIONS[zone]
    minute = timedelta(minutes=1)
    for start, end in ((spring_start, spring_end), (autumn_start, autumn_end)):
        assert not frozen_at(client, start - minute)
        assert frozen_at(client, start)
        assert frozen_at(client, end - minute)
        assert not frozen_at(client, end)


def test_a_local_time_the_clocks_skip_is_a_400_naming_the_field(as_user, lead, ref):
    response = weekend_window(as_user(lead), "Europe/Berlin", starts_at="2030-03-31T02:30:00")
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == "starts_at"
    assert not FreezeWindow.objects.filter(name__startswith="Weekend freeze").exists()
