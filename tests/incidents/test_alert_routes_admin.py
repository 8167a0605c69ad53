"""The admin saves and deletes alert routes through their services: checked, audited, refusals shown."""

from __future__ import annotations

import pytest

from core.audit import transitions_for
from incidents.models import AlertRoute
from incidents.services import alerts
from tests.conftest import make_user
from tests.incidents.factories import incidents_setup

ADD = "/admin/incidents/alertroute/add/"


@pytest.fixture
def refs(db):
    return incidents_setup()


@pytest.fixture
def staff_engineer(db):
    user = make_user("staff-engineer", "framework-engineers")
    user.is_staff = user.is_superuser = True
    user.save()
    return user


def form(refs, matchers: str) -> dict[str, str]:
    return {
        "position": "5",
        "matchers": matchers,
        "system": str(refs["rebuilt"].pk),
        "component": str(refs["nccl"].pk),
        "bug_class": str(refs["hang"].pk),
        "severity": "sev2",
    }


def test_the_admin_adds_a_route_through_the_service(client, refs, staff_engineer):
    client.force_login(staff_engineer)
    response = client.post(ADD, form(refs, '{"alertname": "NcclAllReduceHang"}'))
    assert response.status_code == 302
    route = AlertRoute.objects.get()
    assert route.matchers == {"alertname": "NcclAllReduceHang"}
    assert [t.action for t in transitions_for(route)] == ["created"]


def test_the_admin_shows_the_services_refusal_and_writes_nothing(client, refs, staff_engineer):
    client.force_login(staff_engineer)
    response = client.post(ADD, form(refs, '["alertname"]'))
    assert response.status_code == 200 and "Matchers are an object" in response.content.decode()
    assert not AlertRoute.objects.exists()


def test_the_admin_deletes_routes_with_the_service_action(client, refs, staff_engineer):
    route = alerts.alert_route_create(
        actor=staff_engineer,
        matchers={},
        system=refs["rebuilt"],
        component=refs["nccl"],
        bug_class=refs["hang"],
    )
    client.force_login(staff_engineer)
    client.post(
        "/admin/incidents/alertroute/",
        {"action": "delete_routes", "_selected_action": [str(route.pk)]},
    )
    assert not AlertRoute.objects.exists()
    assert [t.action for t in transitions_for(route)] == ["created", "deleted"]


def test_the_admin_edits_the_fields_the_route_service_takes():
    from incidents.admin import AlertRouteAdmin

    assert AlertRouteAdmin.fields is alerts.ROUTE_FIELDS  # one list: a new route field reaches both
