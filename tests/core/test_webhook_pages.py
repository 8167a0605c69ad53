"""/account/webhooks/ and /api/v1/webhooks/: the same services and rule, the secret shown once."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.models import WebhookEndpoint
from core.roles import PLATFORM_ADMINS
from core.services.webhooks import webhook_endpoint_create
from tests.conftest import make_user
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def program(db, lead):
    metrics_for_template()
    return make_program(lead, slug="alpha")


@pytest.fixture
def platform_admin(db):
    return make_user("platform", PLATFORM_ADMINS)


def create_form(**changes) -> dict:
    """What the page's form posts (a browser always sends the format select's value)."""
    return {
        "name": "Alpha chat",
        "url": "https://chat.example.com/hook",
        "program_key": "alpha",
        "format": "standard",
        **changes,
    }


def test_a_lead_adds_an_endpoint_for_their_program_and_sees_the_secret_once(client, program, lead):
    client.force_login(lead)
    page = client.get("/account/webhooks/").content.decode()
    assert '<option value="alpha">Rebuild</option>' in page
    assert "Every program" not in page  # organisation-wide endpoints are the platform admins'

    response = client.post("/account/webhooks/", create_form(events=["gates", "exception.submitted"]))
    assert response.status_code == 200
    endpoint = WebhookEndpoint.objects.get()
    html = response.content.decode()
    assert "Endpoint “Alpha chat” created" in html and endpoint.secret in html
    assert endpoint.events == ["exception.submitted", "gates"]
    # Listed from now on, never with its secret.
    again = client.get("/account/webhooks/").content.decode()
    assert "Alpha chat" in again and endpoint.secret not in again


def test_the_format_is_a_select_explained_beside_it_and_the_created_card_says_what_to_copy(
    client, program, lead
):
    client.force_login(lead)
    page = client.get("/account/webhooks/").content.decode()
    assert '<select name="format" aria-describedby="formats-explained"' in page
    assert '<option value="slack">Slack incoming webhook</option>' in page
    assert "(https://hooks.slack.com/services/…); no signature, the URL is the secret." in page
    assert "“When a Teams webhook request is received”" in page

    response = client.post("/account/webhooks/", create_form(format="teams"))
    assert response.status_code == 200
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.format == "teams"
    html = response.content.decode()
    assert "Microsoft Teams workflow: nothing to copy, its URL is its secret." in html
    listed = client.get("/account/webhooks/").content.decode()
    assert "Microsoft Teams workflow · Program alpha" in listed
    # A chat tool's URL path is its secret: listed by its host only.
    assert "https://chat.example.com/…" in listed and "chat.example.com/hook" not in listed
    edit = client.get(f"/account/webhooks/{endpoint.pk}/edit/").content.decode()
    assert '<option value="teams" selected>' in edit
    response = client.post(f"/account/webhooks/{endpoint.pk}/edit/", create_form(format="slack"), follow=True)
    assert "Saved “Alpha chat”: format changed." in response.content.decode()
    response = client.post(f"/account/webhooks/{endpoint.pk}/edit/", create_form(format="irc"))
    assert response.status_code == 400 and 'id="error-format"' in response.content.decode()
    endpoint.refresh_from_db()
    assert endpoint.format == "slack"


def test_a_lead_forcing_every_program_gets_the_403_page(client, program, lead):
    client.force_login(lead)
    response = client.post("/account/webhooks/", create_form(program_key=""))
    assert response.status_code == 403  # the service's own check: the form never offered it
    assert (
        "Only a platform admin may manage webhook endpoints for every program." in response.content.decode()
    )
    assert not WebhookEndpoint.objects.exists()


def test_bad_input_is_shown_on_its_field(client, program, lead):
    client.force_login(lead)
    response = client.post("/account/webhooks/", create_form(url="ftp://chat.example.com/"))
    assert response.status_code == 400
    assert 'id="error-url"' in response.content.decode()


def test_a_platform_admin_manages_every_program(client, program, platform_admin):
    client.force_login(platform_admin)
    assert "Every program (and notices about none)" in client.get("/account/webhooks/").content.decode()
    client.post("/account/webhooks/", create_form(program_key=""))
    assert WebhookEndpoint.objects.get().program_key == ""


def test_nobody_else_sees_the_page(client, program, viewer, engineer):
    for user in (viewer, engineer):
        client.force_login(user)
        response = client.get("/account/webhooks/")
        assert response.status_code == 403
        assert (
            "Only a program lead or a platform admin may manage webhook endpoints."
            in response.content.decode()
        )


def test_edit_and_the_buttons_say_what_they_did(client, program, lead):
    endpoint = webhook_endpoint_create(
        actor=lead, name="a", url="https://a.example.com/", program_key="alpha"
    ).endpoint
    client.force_login(lead)
    response = client.post(
        f"/account/webhooks/{endpoint.pk}/edit/", create_form(name="a", events=["incidents"]), follow=True
    )
    assert "Saved “a”: url, events changed." in response.content.decode()
    response = client.post(f"/account/webhooks/{endpoint.pk}/deactivate/", follow=True)
    assert "Deactivated “a”: it receives no new notices." in response.content.decode()
    response = client.post(f"/account/webhooks/{endpoint.pk}/deactivate/", follow=True)
    assert "Endpoint &#x27;a&#x27; is deactivated already." in response.content.decode()
    response = client.post(f"/account/webhooks/{endpoint.pk}/delete/", follow=True)
    assert "Deleted “a” and its deliveries." in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_a_lead_cannot_open_an_endpoint_for_every_program(client, program, lead, platform_admin):
    every = webhook_endpoint_create(actor=platform_admin, name="all", url="https://a.example.com/").endpoint
    client.force_login(lead)
    assert (
        "all"
        not in client.get("/account/webhooks/")
        .content.decode()
        .split("Endpoints you manage")[1]
        .split("Add an endpoint")[0]
    )
    assert client.get(f"/account/webhooks/{every.pk}/edit/").status_code == 403
    assert client.post(f"/account/webhooks/{every.pk}/delete/").status_code == 403
    assert WebhookEndpoint.objects.filter(pk=every.pk).exists()


def test_the_list_takes_the_same_queries_for_one_endpoint_or_ten(
    client, program, lead, django_assert_num_queries
):
    client.force_login(lead)
    webhook_endpoint_create(actor=lead, name="e0", url="https://a.example.com/", program_key="alpha")
    client.get("/account/webhooks/")
    with CaptureQueriesContext(connection) as one:
        client.get("/account/webhooks/")
    for i in range(1, 10):
        webhook_endpoint_create(actor=lead, name=f"e{i}", url="https://a.example.com/", program_key="alpha")
    with django_assert_num_queries(len(one)):
        assert client.get("/account/webhooks/").status_code == 200


# --- the API -----------------------------------------------------------------------------------------


def test_the_api_creates_with_the_secret_in_that_answer_only(as_user, program, lead):
    api = as_user(lead)
    created = api.post("/api/v1/webhooks/", create_form(events=["gates"]), format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["secret"].startswith("whsec_")
    assert {k: body[k] for k in ("name", "program_key", "events", "is_active")} == {
        "name": "Alpha chat",
        "program_key": "alpha",
        "events": ["gates"],
        "is_active": True,
    }
    listed = api.get("/api/v1/webhooks/").json()
    assert [e["id"] for e in listed] == [body["id"]] and "secret" not in listed[0]
    assert "secret" not in api.get(f"/api/v1/webhooks/{body['id']}/").json()

    patched = api.patch(f"/api/v1/webhooks/{body['id']}/", {"events": []}, format="json")
    assert patched.status_code == 200 and patched.json()["events"] == []
    assert api.post(f"/api/v1/webhooks/{body['id']}/deactivate/").json()["is_active"] is False
    assert api.post(f"/api/v1/webhooks/{body['id']}/deactivate/").status_code == 409
    assert api.delete(f"/api/v1/webhooks/{body['id']}/").status_code == 204


def test_the_api_takes_and_shows_the_format(as_user, program, lead):
    api = as_user(lead)
    created = api.post("/api/v1/webhooks/", create_form(format="slack"), format="json").json()
    assert created["format"] == "slack"
    patched = api.patch(f"/api/v1/webhooks/{created['id']}/", {"format": "teams"}, format="json")
    assert patched.status_code == 200 and patched.json()["format"] == "teams"
    assert api.get("/api/v1/webhooks/").json()[0]["format"] == "teams"
    refused = api.patch(f"/api/v1/webhooks/{created['id']}/", {"format": "irc"}, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "format"
    assert WebhookEndpoint.objects.get().format == "teams"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"program_key": "gamma"}, "program_key"),
        ({"events": ["gates", "gate.redy"]}, "events.1"),
        ({"url": "x"}, "url"),
        ({"name": ""}, "name"),
        ({"format": "discord"}, "format"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(as_user, program, lead, changes, field):
    response = as_user(lead).post("/api/v1/webhooks/", create_form(**changes), format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field


def test_a_lead_asking_for_every_program_is_refused(as_user, program, lead):
    response = as_user(lead).post("/api/v1/webhooks/", create_form(program_key=""), format="json")
    assert response.status_code == 403
    assert (
        response.json()["detail"] == "Only a platform admin may manage webhook endpoints for every program."
    )


def test_a_viewer_is_refused_before_the_body_is_read(as_user, program, viewer):
    response = as_user(viewer).post("/api/v1/webhooks/", {"url": 42}, format="json")
    assert response.status_code == 403
    assert response.json()["errors"] == []
    assert as_user(viewer).get("/api/v1/webhooks/").json() == []


def test_a_platform_admins_endpoint_is_not_a_leads(as_user, program, lead, platform_admin):
    every = webhook_endpoint_create(actor=platform_admin, name="all", url="https://a.example.com/").endpoint
    assert as_user(lead).get(f"/api/v1/webhooks/{every.pk}/").status_code == 403
    assert as_user(lead).get("/api/v1/webhooks/").json() == []
    assert as_user(platform_admin).get(f"/api/v1/webhooks/{every.pk}/").status_code == 200
    assert as_user(lead).get("/api/v1/webhooks/999999/").status_code == 404
