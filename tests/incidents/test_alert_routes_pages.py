"""The alert routes page: constant queries, forms only for those who may manage routes, and each
action's feedback (add, refuse, edit, delete); unrouted alerts are shown with a way to route them."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from incidents.models import AlertRoute
from incidents.services import alerts
from tests.incidents.factories import incidents_setup

PAGE = "/incidents/alert-routes/"


@pytest.fixture
def refs(db):
    return incidents_setup()


def route(refs, actor, **matchers):
    return alerts.alert_route_create(
        actor=actor, matchers=matchers, system=refs["rebuilt"], component=refs["nccl"], bug_class=refs["hang"]
    )


def unrouted(actor, fingerprint: str, name: str) -> None:
    alert = alerts.Alert(
        status=alerts.FIRING,
        fingerprint=fingerprint,
        starts_at=timezone.now() - timedelta(minutes=5),
        labels={"alertname": name, "cluster": "rebuilt", "node": "gpu-3"},
    )
    alerts.alert_receive(actor=actor, receiver="r", alerts=[alert], now=timezone.now())


def test_the_page_runs_a_constant_number_of_queries(refs, client, engineer):
    client.force_login(engineer)
    route(refs, engineer, alertname="A")
    unrouted(engineer, "a1", "Lonely")
    client.get(PAGE)
    with CaptureQueriesContext(connection) as few:
        assert client.get(PAGE).status_code == 200
    for i in range(5):
        route(refs, engineer, alertname=f"B{i}")
        unrouted(engineer, f"b{i}", f"Other{i}")
    with CaptureQueriesContext(connection) as more:
        response = client.get(PAGE)
    assert response.content.count(b'data-testid="route-row"') == 6
    assert response.content.count(b'data-testid="unrouted-row"') == 6
    assert len(more) == len(few)


def test_the_incidents_page_links_to_the_routes(refs, client, viewer):
    client.force_login(viewer)
    assert PAGE.encode() in client.get("/incidents/").content


def test_a_viewer_sees_the_routes_but_no_form(refs, client, engineer, viewer):
    route(refs, engineer, alertname="A")
    unrouted(engineer, "a1", "Lonely")
    client.force_login(viewer)
    body = client.get(PAGE).content
    assert b'data-testid="route-row"' in body and b"Lonely" in body
    assert b'data-testid="route-form"' not in body and b"route-delete" not in body
    assert client.post(f"{PAGE}new/", {"system": "rebuilt"}).status_code == 403
    assert AlertRoute.objects.count() == 1


def test_an_engineer_adds_a_route_and_is_told_where_it_went(refs, client, engineer):
    client.force_login(engineer)
    form = {"matchers": "alertname=NcclAllReduceHang, cluster=rebuilt", "system": "rebuilt"}
    form |= {"component": "nccl", "bug_class": "communication-hang", "severity": "sev2"}
    response = client.post(f"{PAGE}new/", form, follow=True)
    assert b"Route added at position 0." in response.content
    assert AlertRoute.objects.get().matchers == {"alertname": "NcclAllReduceHang", "cluster": "rebuilt"}


def test_a_refused_route_shows_the_form_again_with_the_reason(refs, client, engineer):
    client.force_login(engineer)
    # A quoted name may hold any text; NUL is the one thing a label name cannot be.
    form = {"matchers": '"\\u0000"=x', "system": "rebuilt", "component": "nccl"}
    form |= {"bug_class": "communication-hang", "severity": "sev2"}
    response = client.post(f"{PAGE}new/", form)
    assert response.status_code == 400
    assert b'data-testid="error-summary"' in response.content and b"is not a label name" in response.content
    bad = client.post(f"{PAGE}new/", {**form, "matchers": "no equals sign"})
    assert bad.status_code == 400 and b"label=value" in bad.content
    assert not AlertRoute.objects.exists()


def test_an_engineer_edits_and_deletes_a_route(refs, client, engineer):
    client.force_login(engineer)
    existing = route(refs, engineer, alertname="A")
    assert b'data-testid="route-edit-form"' in client.get(f"{PAGE}?edit={existing.pk}").content
    prefix = f"route-{existing.pk}-"
    form = {f"{prefix}matchers": "alertname=B", f"{prefix}system": "legacy", f"{prefix}component": "nccl"}
    form |= {f"{prefix}bug_class": "numerical-divergence", f"{prefix}severity": "sev1"}
    response = client.post(f"{PAGE}{existing.pk}/edit/", form, follow=True)
    assert b"Route at position 0 saved." in response.content
    existing.refresh_from_db()
    assert (existing.matchers, existing.system.key, existing.severity) == (
        {"alertname": "B"},
        "legacy",
        "sev1",
    )
    response = client.post(f"{PAGE}{existing.pk}/delete/", follow=True)
    assert b"Route deleted" in response.content and not AlertRoute.objects.exists()


def test_route_it_starts_a_route_from_the_unrouted_alerts_labels(refs, client, engineer):
    unrouted(engineer, "c3", "GpuXidErrors")
    client.force_login(engineer)
    body = client.get(f"{PAGE}?for=c3").content.decode()
    assert 'value="alertname=GpuXidErrors, cluster=rebuilt"' in body


def test_an_api_route_with_a_comma_in_a_value_is_saved_from_the_page_unchanged(refs, client, engineer):
    client.force_login(engineer)
    matchers = {"alertname": "A", "job": "train,eval=1", "k8s.namespace": 'say "hi"'}
    existing = route(refs, engineer, **matchers)
    body = client.get(f"{PAGE}?edit={existing.pk}").content.decode()
    shown = html.unescape(re.search(rf'name="route-{existing.pk}-matchers"[^>]*value="([^"]*)"', body)[1])
    assert shown == 'alertname=A, job="train,eval=1", k8s.namespace="say \\"hi\\""'
    prefix = f"route-{existing.pk}-"
    form = {f"{prefix}matchers": shown, f"{prefix}system": "rebuilt", f"{prefix}component": "nccl"}
    form |= {f"{prefix}bug_class": "communication-hang", f"{prefix}severity": "sev1"}
    response = client.post(f"{PAGE}{existing.pk}/edit/", form, follow=True)
    assert b"saved." in response.content
    existing.refresh_from_db()
    assert (existing.matchers, existing.severity) == (matchers, "sev1")


@pytest.mark.parametrize("typed", ['job="train,eval', "job=train, eval", 'job="a\\q"'])
def test_a_comma_outside_quotes_or_a_broken_quote_is_refused_naming_the_field(refs, client, engineer, typed):
    client.force_login(engineer)
    form = {"matchers": typed, "system": "rebuilt", "component": "nccl"}
    form |= {"bug_class": "communication-hang", "severity": "sev2"}
    response = client.post(f"{PAGE}new/", form)
    assert response.status_code == 400 and b"in double quotes" in response.content
    assert not AlertRoute.objects.exists()
