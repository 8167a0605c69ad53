"""Per user and kind of notice: in-app only, email or the daily digest (core.services.preferences), and
notification_send honouring it; the settings page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType

from core.errors import ApplicationError
from core.models import Delivery, NotificationPreference, NotificationReceipt, Transition
from core.notification_kinds import EVENTS, Kind, kind_of
from core.notifications import notification_send
from core.services.preferences import notification_preferences_of, notification_preferences_set
from tests.program.factories import make_program, metrics_for_template

IN_APP, EMAIL, DIGEST = "in_app", "email", "digest"


def test_every_event_sent_today_has_a_kind_other_than_other():
    assert {kind_of(event) for event in EVENTS} == set(Kind) - {Kind.OTHER}
    assert all(kind_of(event) == kind for event, kind in EVENTS.items())
    assert kind_of("gate.something_new") == Kind.GATES  # by subject: a new gate event is a gate notice
    assert kind_of("welcome") == Kind.OTHER


def test_without_a_choice_everyone_gets_in_app_and_email(db, lead):
    assert notification_preferences_of(lead) == {kind: EMAIL for kind in Kind.values}


def emails_of(notification) -> list[str]:
    return [
        address
        for delivery in notification.deliveries.filter(channel=Delivery.Channel.EMAIL)
        for address in delivery.recipients
    ]


def test_send_honours_each_persons_choice_for_the_kind(db, lead, lead2, engineer):
    notification_preferences_set(actor=lead, choices={"gates": IN_APP})
    notification_preferences_set(actor=lead2, choices={"gates": DIGEST, "exceptions": IN_APP})

    gate = notification_send(event="gate.ready", subject="s", body="b", users=[lead, lead2, engineer])

    # In-app for all three, whatever they chose.
    receipts = {r.user.username: r.in_digest for r in NotificationReceipt.objects.filter(notification=gate)}
    assert receipts == {"lead": False, "lead2": True, "engineer": False}
    assert emails_of(gate) == ["engineer@example.com"]  # in-app only and digest: no email now

    # Another kind follows its own choice: lead chose nothing for exceptions, so gets the email.
    exception = notification_send(event="exception.submitted", subject="s", body="b", users=[lead, lead2])
    assert emails_of(exception) == ["lead@example.com"]


def test_addresses_without_an_account_always_get_the_email(db, lead):
    notification_preferences_set(actor=lead, choices={"gates": IN_APP})
    notification = notification_send(
        event="gate.ready", subject="s", body="b", users=[lead], recipients=["ops@example.com"]
    )
    assert emails_of(notification) == ["ops@example.com"]


def test_setting_writes_only_what_changed_with_one_audit_row(db, lead):
    changed = notification_preferences_set(actor=lead, choices={"gates": DIGEST, "feeds": EMAIL})
    assert changed == {"gates": (EMAIL, DIGEST)}
    assert notification_preferences_set(actor=lead, choices={"gates": DIGEST}) == {}
    changed = notification_preferences_set(actor=lead, choices={"gates": IN_APP})
    assert changed == {"gates": (DIGEST, IN_APP)}
    assert NotificationPreference.objects.filter(user=lead).count() == 1
    history = Transition.objects.filter(
        content_type=ContentType.objects.get_for_model(User), object_id=lead.pk
    )
    assert [t.data["changed"] for t in history] == [{"gates": [EMAIL, DIGEST]}, {"gates": [DIGEST, IN_APP]}]
    assert {t.actor_id for t in history} == {lead.pk}


@pytest.mark.parametrize(("choices", "field"), [({"gate": EMAIL}, "gate"), ({"gates": "sms"}, "gates")])
def test_an_unknown_kind_or_channel_is_a_400_naming_it(db, lead, choices, field):
    with pytest.raises(ApplicationError) as refused:
        notification_preferences_set(actor=lead, choices=choices)
    assert refused.value.status == 400
    assert refused.value.errors[0]["field"] == field
    assert not NotificationPreference.objects.exists()


# --- the page ----------------------------------------------------------------------------------------


def form_of(**choices: str) -> dict[str, str]:
    return {kind: choices.get(kind, EMAIL) for kind in Kind.values}


def test_the_page_shows_my_choices_and_saves_them_with_a_message(client, viewer):
    client.force_login(viewer)
    page = client.get("/account/notifications/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="gates" value="email"' in html and "checked" in html
    assert "gate.ready, gate.decided, gate.stale" in html  # which events each kind holds

    response = client.post("/account/notifications/", form_of(gates=DIGEST, incidents=IN_APP), follow=True)
    assert response.redirect_chain == [("/account/notifications/", 302)]
    html = response.content.decode()
    assert "Saved. Gates: in-app and a daily digest email; Incidents: in-app only." in html
    assert notification_preferences_of(viewer)["gates"] == DIGEST
    # Saved again unchanged, it says so.
    again = client.post("/account/notifications/", form_of(gates=DIGEST, incidents=IN_APP), follow=True)
    assert "Nothing changed" in again.content.decode()


def test_a_bad_choice_is_a_400_on_the_form_and_changes_nothing(client, viewer):
    client.force_login(viewer)
    response = client.post("/account/notifications/", form_of(gates="sms"))
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    assert not NotificationPreference.objects.exists()


def test_the_webhooks_link_shows_only_to_who_may_manage_them(client, viewer, lead):
    metrics_for_template()
    make_program(lead)  # a lead manages the endpoints of programs: with none, there is nothing to manage
    client.force_login(viewer)
    assert "/account/webhooks/" not in client.get("/account/notifications/").content.decode()
    client.force_login(lead)
    assert "/account/webhooks/" in client.get("/account/notifications/").content.decode()


def test_the_page_takes_the_same_queries_whatever_was_chosen(client, viewer, django_assert_num_queries):
    client.force_login(viewer)
    client.get("/account/notifications/")  # session and user loaded once, as on any page

    def queries() -> int:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as captured:
            assert client.get("/account/notifications/").status_code == 200
        return len(captured)

    none_chosen = queries()
    notification_preferences_set(actor=viewer, choices={kind: DIGEST for kind in Kind.values})
    with django_assert_num_queries(none_chosen):
        client.get("/account/notifications/")
    # session, user, groups, preferences, programs (the webhooks link), unread count
    assert none_chosen <= 6
