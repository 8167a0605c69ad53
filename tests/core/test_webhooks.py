"""Webhook endpoints scoped to a program and to kinds of event: the services, who may manage them
(core.policies.may_manage_webhooks), and which notices reach which endpoint."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from core.audit import transitions_for
from core.errors import ApplicationError
from core.models import Delivery, WebhookEndpoint
from core.notifications import notification_send
from core.policies import may_manage_webhooks
from core.roles import PLATFORM_ADMINS
from core.services import webhooks
from tests.conftest import make_user
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def programs(db, lead):
    metrics_for_template()
    return [make_program(lead, slug="alpha").slug, make_program(lead, slug="beta").slug]


@pytest.fixture
def admin_user(db):
    return make_user("platform", PLATFORM_ADMINS)


def test_who_may_manage_which_scope(db, lead, lead2, viewer, admin_user):
    metrics_for_template()
    make_program(lead, slug="alpha")
    make_program(lead2, slug="beta")
    root = make_user("root")
    root.is_superuser = True
    assert [may_manage_webhooks(lead, key) for key in ("", "alpha")] == [False, True]
    assert not may_manage_webhooks(lead, "beta")  # a lead manages their own program's endpoints only
    assert [may_manage_webhooks(admin_user, key) for key in ("", "alpha")] == [True, True]
    assert [may_manage_webhooks(root, key) for key in ("", "alpha")] == [True, True]
    assert [may_manage_webhooks(viewer, key) for key in ("", "alpha")] == [False, False]


def test_a_lead_creates_an_endpoint_for_a_program_and_sees_its_secret_once(programs, lead):
    created = webhooks.webhook_endpoint_create(
        actor=lead,
        name=" Alpha chat ",
        url="https://chat.example.com/hook",
        program_key="alpha",
        events=["gates", "exception.submitted", "gates"],
    )
    endpoint = created.endpoint
    assert (endpoint.name, endpoint.program_key, endpoint.events, endpoint.is_active) == (
        "Alpha chat",
        "alpha",
        ["exception.submitted", "gates"],
        True,
    )
    assert created.secret.startswith("whsec_") and endpoint.secret == created.secret
    [audit] = transitions_for(endpoint)
    assert (audit.action, audit.actor, audit.to_state) == ("created", lead, "active")
    assert "secret" not in audit.data and created.secret not in str(audit.data)


def test_a_lead_may_not_create_an_endpoint_for_every_program(programs, lead):
    with pytest.raises(
        PermissionDenied, match="Only a platform admin may manage webhook endpoints for every program"
    ):
        webhooks.webhook_endpoint_create(actor=lead, name="all", url="https://x.example.com/")
    assert not WebhookEndpoint.objects.exists()


def test_a_viewer_may_not_create_any(programs, viewer):
    with pytest.raises(PermissionDenied, match="Only a lead of program 'alpha' or a platform admin"):
        webhooks.webhook_endpoint_create(
            actor=viewer, name="a", url="https://x.example.com/", program_key="alpha"
        )


def test_a_platform_admin_creates_one_for_every_program(programs, admin_user):
    created = webhooks.webhook_endpoint_create(actor=admin_user, name="all", url="https://x.example.com/")
    assert created.endpoint.program_key == ""


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"name": " "}, "name"),
        ({"url": "ftp://x.example.com/"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"program_key": "gamma"}, "program_key"),
        ({"events": ["gates", "gate.redy"]}, "events.1"),
        ({"format": "discord"}, "format"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(programs, admin_user, values, field):
    given = {"name": "n", "url": "https://x.example.com/", "program_key": "alpha", **values}
    with pytest.raises(ApplicationError) as refused:
        webhooks.webhook_endpoint_create(actor=admin_user, **given)
    assert refused.value.status == 400
    assert refused.value.errors[0]["field"] == field
    assert not WebhookEndpoint.objects.exists()


@pytest.fixture
def alpha_hook(programs, lead):
    return webhooks.webhook_endpoint_create(
        actor=lead, name="alpha", url="https://alpha.example.com/", program_key="alpha"
    ).endpoint


def test_an_edit_changes_what_it_names_and_records_old_and_new(alpha_hook, lead):
    changed = webhooks.webhook_endpoint_update(
        actor=lead,
        endpoint=alpha_hook,
        changes={"name": "alpha", "events": ["incidents"], "program_key": "beta"},
    )
    assert changed == ["program_key", "events"]
    alpha_hook.refresh_from_db()
    assert (alpha_hook.program_key, alpha_hook.events) == ("beta", ["incidents"])
    audit = transitions_for(alpha_hook).last()
    assert audit.action == "updated"
    assert audit.data["changed"] == {"program_key": ["alpha", "beta"], "events": [[], ["incidents"]]}
    # Nothing changed: nothing written.
    assert webhooks.webhook_endpoint_update(actor=lead, endpoint=alpha_hook, changes={"name": "alpha"}) == []
    assert transitions_for(alpha_hook).count() == 2


def test_a_lead_may_not_move_an_endpoint_to_every_program(alpha_hook, lead):
    with pytest.raises(PermissionDenied):
        webhooks.webhook_endpoint_update(actor=lead, endpoint=alpha_hook, changes={"program_key": ""})
    alpha_hook.refresh_from_db()
    assert alpha_hook.program_key == "alpha"


def test_deactivate_reactivate_and_delete_each_leave_an_audit_row(alpha_hook, lead):
    webhooks.webhook_endpoint_deactivate(actor=lead, endpoint=alpha_hook)
    with pytest.raises(ApplicationError, match="deactivated already") as twice:
        webhooks.webhook_endpoint_deactivate(actor=lead, endpoint=alpha_hook)
    assert twice.value.status == 409
    webhooks.webhook_endpoint_reactivate(actor=lead, endpoint=alpha_hook)
    pk = alpha_hook.pk
    webhooks.webhook_endpoint_delete(actor=lead, endpoint=alpha_hook)
    assert not WebhookEndpoint.objects.filter(pk=pk).exists()
    alpha_hook.pk = pk
    assert [(t.action, t.from_state, t.to_state) for t in transitions_for(alpha_hook)] == [
        ("created", "", "active"),
        ("deactivated", "active", "inactive"),
        ("reactivated", "inactive", "active"),
        ("deleted", "active", ""),
    ]


def test_a_lead_may_not_touch_an_endpoint_for_every_program(programs, lead, admin_user):
    every = webhooks.webhook_endpoint_create(
        actor=admin_user, name="all", url="https://x.example.com/"
    ).endpoint
    for service in (webhooks.webhook_endpoint_deactivate, webhooks.webhook_endpoint_delete):
        with pytest.raises(PermissionDenied):
            service(actor=lead, endpoint=every)
    with pytest.raises(PermissionDenied):
        webhooks.webhook_endpoint_update(actor=lead, endpoint=every, changes={"name": "mine"})
    assert WebhookEndpoint.objects.get(pk=every.pk).is_active


def test_the_format_is_chosen_at_creation_and_changed_with_an_audit_row(alpha_hook, lead):
    assert alpha_hook.format == "standard"  # as every endpoint was before formats existed
    assert webhooks.webhook_endpoint_update(actor=lead, endpoint=alpha_hook, changes={"format": "slack"}) == [
        "format"
    ]
    alpha_hook.refresh_from_db()
    assert alpha_hook.format == "slack"
    assert transitions_for(alpha_hook).last().data["changed"] == {"format": ["standard", "slack"]}
    teams = webhooks.webhook_endpoint_create(
        actor=lead, name="t", url="https://x.example.com/", program_key="alpha", format="teams"
    ).endpoint
    assert teams.format == "teams" and transitions_for(teams).get().data["format"] == "teams"


def test_the_audit_trail_keeps_a_chat_urls_host_not_its_secret_path(programs, lead):
    slack = webhooks.webhook_endpoint_create(
        actor=lead,
        name="s",
        url="https://hooks.slack.com/services/T0/B0/s3cr3t",
        program_key="alpha",
        format="slack",
    ).endpoint
    webhooks.webhook_endpoint_update(
        actor=lead, endpoint=slack, changes={"url": "https://hooks.slack.com/services/T0/B0/n3w"}
    )
    assert [t.data for t in transitions_for(slack)] == [
        {
            "name": "s",
            "url": "https://hooks.slack.com/…",
            "program_key": "alpha",
            "events": [],
            "format": "slack",
        },
        {"changed": {"url": ["https://hooks.slack.com/…", "https://hooks.slack.com/…"]}},
    ]


# --- which notices reach which endpoint ----------------------------------------------------------------


def endpoint(name: str, *, program_key: str = "", events: list[str] | None = None, active: bool = True):
    return WebhookEndpoint.objects.create(
        name=name,
        url=f"https://{name}.example.com/",
        secret="whsec_eA==",
        program_key=program_key,
        events=events or [],
        is_active=active,
    )


def test_an_endpoint_hears_its_program_and_its_kinds_only(db):
    everything = endpoint("everything")
    alpha = endpoint("alpha", program_key="alpha")
    alpha_gates = endpoint("alpha-gates", program_key="alpha", events=["gates"])
    one_event = endpoint("submitted", events=["exception.submitted"])
    endpoint("off", active=False)

    def reached(event: str, program_key: str = "") -> set[str]:
        notification = notification_send(event=event, subject="s", body="b", program_key=program_key)
        return set(
            notification.deliveries.filter(channel=Delivery.Channel.WEBHOOK).values_list(
                "endpoint__name", flat=True
            )
        )

    assert reached("gate.ready", "alpha") == {"everything", "alpha", "alpha-gates"}
    assert reached("exception.submitted", "alpha") == {"everything", "alpha", "submitted"}
    assert reached("gate.ready", "beta") == {"everything"}
    # A notice about no program (an incident, a stale feed) reaches only endpoints for every program.
    assert reached("incident.filed") == {"everything"}
    assert Delivery.objects.filter(notification__program_key="alpha").count() == 6  # 3 + 3 above
    assert {everything.pk, alpha.pk, alpha_gates.pk, one_event.pk} == set(
        Delivery.objects.values_list("endpoint_id", flat=True)
    )


# --- the admin: browse, and act through the services -----------------------------------------------------


def test_the_admin_deactivates_through_the_service(client, alpha_hook):
    staff = make_user("staff", PLATFORM_ADMINS)
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    page = client.get(f"/admin/core/webhookendpoint/{alpha_hook.pk}/change/").content.decode()
    assert alpha_hook.secret not in page
    client.post("/admin/core/webhookendpoint/", {"action": "deactivate", "_selected_action": [alpha_hook.pk]})
    alpha_hook.refresh_from_db()
    assert not alpha_hook.is_active
    assert transitions_for(alpha_hook).last().actor == staff


def test_the_admin_switches_the_format_through_the_service(client, alpha_hook):
    WebhookEndpoint.objects.filter(pk=alpha_hook.pk).update(url="https://hooks.example.com/T0/B0/s3cr3t")
    staff = make_user("staff", PLATFORM_ADMINS)
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    response = client.post(
        "/admin/core/webhookendpoint/",
        {"action": "send_teams", "_selected_action": [alpha_hook.pk]},
        follow=True,
    )
    assert "Set 1 endpoint(s) to Microsoft Teams workflow." in response.content.decode()
    # Its URL's path is now its secret: neither the list nor its page shows it.
    for page in ("", f"{alpha_hook.pk}/change/"):
        html = client.get(f"/admin/core/webhookendpoint/{page}").content.decode()
        assert "https://hooks.example.com/…" in html and "s3cr3t" not in html
    alpha_hook.refresh_from_db()
    assert alpha_hook.format == "teams"
    audit = transitions_for(alpha_hook).last()
    assert (audit.action, audit.actor, audit.data["changed"]) == (
        "updated",
        staff,
        {"format": ["standard", "teams"]},
    )
