"""In-app notifications: who gets a receipt from the real callers, the link they carry, reading them."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from core.models import Notification, NotificationReceipt
from core.notifications import notification_send
from freeze import services as freeze_services
from program import services as program_services
from program.models import Gate
from tests.freeze.factories import freeze_setup, submitted_exception
from tests.program.factories import make_lead, make_program, metrics_for_template, observe, spread


def receipts_of(notification: Notification) -> set[str]:
    return set(notification.receipts.values_list("user__username", flat=True))


def unread_badge(html: str) -> str | None:
    found = re.search(r'data-testid="unread-count"[^>]*>(\d+)<', html)
    return found.group(1) if found else None


@pytest.fixture
def ready_gate(db, lead):
    """The canary exit gate made ready by a real evaluation, which notifies the program's lead."""
    ref = metrics_for_template()
    make_program(lead)
    observe(ref["throughput"], ref["legacy"], ref["medium"], spread(100))
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(90))
    observe(ref["step"], ref["legacy"], ref["medium"], spread(800))
    observe(ref["step"], ref["rebuilt"], ref["medium"], spread(700))
    gate = Gate.objects.get(phase__kind="canary", kind="exit")
    for criterion in gate.criteria.filter(kind="manual"):
        program_services.criterion_attest(actor=lead, criterion=criterion, link="https://wiki.example.com/x")
    program_services.gate_evaluate(gate=gate)
    gate.refresh_from_db()
    assert gate.status == "ready"
    return gate


def test_a_gate_getting_ready_reaches_its_programs_lead_in_app_with_a_link(ready_gate, lead2):
    notification = Notification.objects.get(event="gate.ready")
    assert receipts_of(notification) == {"lead"}  # the program's lead, not every program lead
    assert notification.link == f"/programs/gates/{ready_gate.pk}/"


def test_a_gate_decision_reaches_the_lead_with_a_link(ready_gate, lead):
    program_services.gate_decide(gate=ready_gate, actor=lead, decision="pass", note="clear")
    notification = Notification.objects.get(event="gate.decided")
    assert receipts_of(notification) == {"lead"}
    assert notification.link == f"/programs/gates/{ready_gate.pk}/"


def test_a_new_metric_version_tells_the_lead_which_gate_went_stale(
    db, lead, metric_owner, client, django_capture_on_commit_callbacks
):
    from metrics.services import definition_activate, definition_version_create

    metrics_for_template()
    make_program(lead)
    new = definition_version_create(actor=metric_owner, key="step-time", changes={"excludes": ["warmup"]})
    with django_capture_on_commit_callbacks(execute=True):
        definition_activate(actor=metric_owner, definition=new)
    gate = Gate.objects.get(stale=True)
    notification = Notification.objects.get(event="gate.stale")
    assert receipts_of(notification) == {"lead"}
    assert notification.link == f"/programs/gates/{gate.pk}/"
    # …and "My work" lists the gate under the lead's stale gates.
    client.force_login(lead)
    html = client.get("/").content.decode()
    stale = html[html.index('id="stale-gates"') :]
    assert f"/programs/gates/{gate.pk}/" in stale[: stale.index("</section>")]


def test_submitting_an_exception_reaches_every_approver_but_its_author(
    lead, lead2, engineer, component_owner, viewer, mailoutbox, django_capture_on_commit_callbacks
):
    ref = freeze_setup(lead)
    make_lead(ref["program"], lead2)  # approvers are the leads of the window's program (issue 25)
    with django_capture_on_commit_callbacks(execute=True):
        exception = submitted_exception(engineer, ref["trainer"], ref["now"])
    notification = Notification.objects.get(event="exception.submitted")
    assert receipts_of(notification) == {"lead", "lead2", "component_owner"}
    assert notification.link == f"/freeze/exceptions/{exception.pk}/"
    # The same people get the email, at their addresses.
    assert sorted(mailoutbox[-1].to) == [
        "component_owner@example.com",
        "lead2@example.com",
        "lead@example.com",
    ]


def test_a_decided_exception_reaches_its_requester(lead, engineer, component_owner):
    ref = freeze_setup(lead)
    exception = submitted_exception(engineer, ref["trainer"], ref["now"])
    freeze_services.exception_approve(actor=component_owner, exception=exception)
    notification = Notification.objects.get(event="exception.decided")
    assert receipts_of(notification) == {"engineer"}
    assert notification.link == f"/freeze/exceptions/{exception.pk}/"


def test_a_user_without_an_address_still_gets_the_in_app_notification(db, lead):
    lead.email = ""
    lead.save()
    notification = notification_send(event="gate.ready", subject="s", body="b", users=[lead])
    assert receipts_of(notification) == {"lead"}
    assert not notification.deliveries.exists()  # no address, no email delivery


@override_settings(SITE_URL="https://tracker.example.com")
def test_the_email_body_ends_with_the_absolute_link(db, lead, mailoutbox, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        notification_send(
            event="gate.ready",
            subject="Gate ready",
            body="Decide it.",
            link="/programs/gates/12/",
            users=[lead],
        )
    assert mailoutbox[0].body == "Decide it.\n\nhttps://tracker.example.com/programs/gates/12/"
    assert mailoutbox[0].to == ["lead@example.com"]


def open_inbox(client, user):
    client.force_login(user)
    return client.get("/notifications/")


def send_to(
    user, n: int, *, link: str = "/programs/", event: str = "gate.decided"
) -> list[NotificationReceipt]:
    """News notices (to-dos have a list of their own above the pages: test_inbox_to_do)."""
    for i in range(n):
        notification_send(event=event, subject=f"note {i}", body=f"body {i}", link=link, users=[user])
    return list(NotificationReceipt.objects.filter(user=user).order_by("notification_id"))


def test_the_inbox_lists_newest_first_in_pages(client, lead):
    send_to(lead, 25)
    first = open_inbox(client, lead).content.decode()
    assert first.index("note 24") < first.index("note 23")
    assert "note 4" not in first and "Page 1 of 2" in first
    second = client.get("/notifications/?page=2").content.decode()
    assert "note 4" in second and "note 0" in second and "note 5" not in second


def test_the_header_counts_unread_notifications_on_every_page(client, lead, viewer):
    send_to(lead, 3)
    send_to(viewer, 1)
    client.force_login(lead)
    assert unread_badge(client.get("/programs/").content.decode()) == "3"
    assert unread_badge(client.get("/freeze/").content.decode()) == "3"
    client.force_login(viewer)
    assert unread_badge(client.get("/programs/").content.decode()) == "1"


def test_no_badge_without_unread_notifications(client, lead):
    client.force_login(lead)
    html = client.get("/programs/").content.decode()
    assert "Notifications" in html and unread_badge(html) is None


def test_opening_a_notification_marks_it_read_and_goes_to_its_object(client, lead):
    receipt, other = send_to(lead, 2, link="/programs/gates/12/")
    client.force_login(lead)
    response = client.post(f"/notifications/{receipt.notification_id}/open/")
    assert response.status_code == 302 and response["Location"] == "/programs/gates/12/"
    receipt.refresh_from_db()
    other.refresh_from_db()
    assert receipt.read_at is not None and other.read_at is None
    assert unread_badge(client.get("/notifications/").content.decode()) == "1"


def test_a_link_off_the_site_is_never_followed(client, lead):
    (receipt,) = send_to(lead, 1, link="https://evil.example.com/")
    client.force_login(lead)
    response = client.post(f"/notifications/{receipt.notification_id}/open/", follow=True)
    assert response.redirect_chain == [("/notifications/", 302)]
    assert "links to no page; marked as read" in response.content.decode()


def test_mark_one_read_says_so_and_returns_where_it_was_asked(client, lead):
    receipt, _ = send_to(lead, 2)
    client.force_login(lead)
    response = client.post(f"/notifications/{receipt.notification_id}/read/", {"next": "/"}, follow=True)
    assert response.redirect_chain == [("/", 302)]
    html = response.content.decode()
    assert "Marked “note 0” as read." in html
    assert unread_badge(html) == "1"
    again = client.post(f"/notifications/{receipt.notification_id}/read/", follow=True).content.decode()
    assert "“note 0” was read already." in again


def test_mark_all_read_counts_them_and_leaves_other_inboxes_alone(client, lead, viewer):
    send_to(lead, 3)
    send_to(viewer, 2)
    client.force_login(lead)
    html = client.post("/notifications/read-all/", follow=True).content.decode()
    assert "Marked 3 notifications as read." in html and unread_badge(html) is None
    assert NotificationReceipt.objects.filter(user=viewer, read_at__isnull=True).count() == 2
    assert "Nothing was unread." in client.post("/notifications/read-all/", follow=True).content.decode()


def test_someone_elses_notification_is_not_found_and_stays_unread(client, lead, viewer):
    (receipt,) = send_to(lead, 1)
    client.force_login(viewer)
    assert client.post(f"/notifications/{receipt.notification_id}/read/").status_code == 404
    assert client.post(f"/notifications/{receipt.notification_id}/open/").status_code == 404
    receipt.refresh_from_db()
    assert receipt.read_at is None


def test_the_inbox_runs_the_same_queries_for_few_and_many(client, lead, django_assert_num_queries):
    send_to(lead, 2)
    client.force_login(lead)
    client.get("/notifications/")  # warm process-wide caches
    # session, user, groups (roles), unread count, the to-do list, paginator count, the page of receipts.
    with django_assert_num_queries(7):
        assert client.get("/notifications/").status_code == 200
    send_to(lead, 40)
    send_to(lead, 30, event="exception.submitted")
    with django_assert_num_queries(7):
        assert client.get("/notifications/?page=2").status_code == 200


def test_the_service_refuses_to_mark_someone_elses_notification(lead, viewer):
    from django.core.exceptions import PermissionDenied

    from core.services.inbox import receipt_read

    (receipt,) = send_to(lead, 1)
    with pytest.raises(PermissionDenied):
        receipt_read(actor=viewer, receipt=receipt)
    assert receipt_read(actor=lead, receipt=receipt) is True
    assert receipt_read(actor=lead, receipt=receipt) is False  # a second click changes nothing
