"""A notice you acted on is read: notifications_mark_read_for, and the incident services calling it."""

from __future__ import annotations

import pytest

from core.errors import ApplicationError
from core.models import NotificationReceipt
from core.notifications import notification_send
from core.roles import FRAMEWORK_ENGINEERS
from core.services.inbox import notifications_mark_read_for
from incidents import services as incident_services
from tests.conftest import make_user
from tests.incidents.factories import file_incident, incidents_setup


def unread(user) -> list[str]:
    return list(
        NotificationReceipt.objects.filter(user=user, read_at__isnull=True)
        .order_by("notification_id")
        .values_list("notification__link", flat=True)
    )


def test_only_the_actors_unread_notices_about_that_object_turn_read(db, lead, lead2):
    for link in ("/programs/gates/1/", "/programs/gates/1/", "/programs/gates/2/"):
        notification_send(event="gate.ready", subject="s", body="b", link=link, users=[lead, lead2])

    assert notifications_mark_read_for(actor=lead, link="/programs/gates/1/") == 2
    assert unread(lead) == ["/programs/gates/2/"]
    assert unread(lead2) == ["/programs/gates/1/", "/programs/gates/1/", "/programs/gates/2/"]
    # Already read, or no link at all: nothing to do.
    assert notifications_mark_read_for(actor=lead, link="/programs/gates/1/") == 0
    assert notifications_mark_read_for(actor=lead, link="") == 0


@pytest.fixture
def team(db):
    """The owner team of the incident's component: one who fixes (an engineer) and one who watches."""
    return {
        "fixer": make_user("fixer", FRAMEWORK_ENGINEERS, "training-platform"),
        "watcher": make_user("watcher", "training-platform"),
    }


def test_updating_an_incident_marks_the_updaters_notice_about_it_read(team, engineer):
    refs = incidents_setup()
    incident = file_incident(engineer, refs)  # the team hears of it
    link = f"/incidents/{incident.pk}/"
    assert unread(team["fixer"]) == unread(team["watcher"]) == [link]

    incident_services.incident_update(
        actor=team["fixer"], incident=incident, changes={"troubleshooting": "NCCL_DEBUG=INFO"}
    )

    assert unread(team["fixer"]) == []
    assert unread(team["watcher"]) == [link]  # the watcher has not acted


def test_resolving_marks_the_resolvers_notices_read_and_tells_the_others(team, engineer):
    refs = incidents_setup()
    incident = file_incident(engineer, refs)
    incident_services.incident_resolve(actor=team["fixer"], incident=incident)
    assert unread(team["fixer"]) == []
    # The watcher has the filing and the resolution unread.
    assert unread(team["watcher"]) == [f"/incidents/{incident.pk}/"] * 2


def test_a_refused_update_leaves_the_notice_unread(team, engineer):
    refs = incidents_setup()
    incident = file_incident(engineer, refs)
    with pytest.raises(ApplicationError):
        incident_services.incident_update(actor=team["fixer"], incident=incident, changes={"title": " "})
    assert unread(team["fixer"]) == [f"/incidents/{incident.pk}/"]
