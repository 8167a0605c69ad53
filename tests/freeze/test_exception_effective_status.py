"""?status= filters on the effective status, the one the answer shows (issue 12)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from freeze import services
from freeze.models import FreezeException
from tests.freeze.factories import freeze_setup, submitted_exception

URL = "/api/v1/freeze-exceptions/"


@pytest.fixture
def ended_and_live(db, lead, engineer, component_owner):
    """Two approved exceptions on the same component: one's change window has ended (the row still
    says approved: the sweep has not run), the other's has not."""
    ref = freeze_setup(lead)
    ended = submitted_exception(engineer, ref["trainer"], ref["now"], title="ended")
    live = submitted_exception(engineer, ref["trainer"], ref["now"], title="live")
    for exception in (ended, live):
        services.exception_approve(actor=component_owner, exception=exception)
    FreezeException.objects.filter(pk=ended.pk).update(
        change_starts_at=timezone.now() - timedelta(hours=3),
        change_ends_at=timezone.now() - timedelta(seconds=1),
    )
    assert FreezeException.objects.get(pk=ended.pk).status == "approved"
    return ended, live


def test_an_approved_list_never_shows_an_expired_row(as_user, engineer, ended_and_live):
    """The bug from the issue: ?status=approved returned a row whose status read expired."""
    _ended, live = ended_and_live
    rows = as_user(engineer).get(URL, {"status": "approved"}).json()["results"]
    assert [r["id"] for r in rows] == [live.pk]
    assert {r["status"] for r in rows} == {"approved"}


def test_an_expired_list_has_the_ended_approved_one(as_user, engineer, ended_and_live):
    ended, _ = ended_and_live
    rows = as_user(engineer).get(URL, {"status": "expired"}).json()["results"]
    assert [(r["id"], r["status"]) for r in rows] == [(ended.pk, "expired")]


def test_every_status_filter_agrees_with_the_status_shown(as_user, engineer, ended_and_live):
    client = as_user(engineer)
    everything = {r["id"]: r["status"] for r in client.get(URL).json()["results"]}
    for status in FreezeException.Status.values:
        rows = client.get(URL, {"status": status}).json()["results"]
        assert {r["id"] for r in rows} == {pk for pk, shown in everything.items() if shown == status}


def test_an_unknown_status_is_a_400_naming_the_field(as_user, engineer, ended_and_live):
    response = as_user(engineer).get(URL, {"status": "approvedd"})
    assert response.status_code == 400
    assert "status" in str(response.json())


def test_the_annotation_and_the_row_in_hand_agree(ended_and_live):
    """with_effective_status (lists, filters, counts) and effective_status (a locked row) are one rule."""
    for exception in FreezeException.objects.with_effective_status():
        assert exception.current_status == exception.effective_status


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"component__key": "no-such"}, "component__key"),
        ({"window": "999999"}, "window"),
        ({"risk": "extreme"}, "risk"),
    ],
)
def test_an_unknown_key_in_the_filters_is_a_400_naming_it(as_user, engineer, ended_and_live, params, field):
    response = as_user(engineer).get(URL, params)
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == [field]


def test_the_key_filters_still_filter(as_user, engineer, ended_and_live):
    ended, live = ended_and_live
    client = as_user(engineer)
    both = {row["id"] for row in client.get(URL, {"component__key": "trainer"}).json()["results"]}
    assert both == {ended.pk, live.pk}
    assert client.get(URL, {"component__key": "kernels"}).json()["results"] == []
    in_window = client.get(URL, {"window": live.window_id, "status": "approved"}).json()["results"]
    assert [row["id"] for row in in_window] == [live.pk]
