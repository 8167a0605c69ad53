"""The inbox as a to-do list (issue 29): a notice is done once the action it asks for is taken, by
anyone; "awaiting approval" stays only with those who may approve now; similar notices are grouped."""

from __future__ import annotations

from django.contrib.auth.models import User

from core.models import NotificationReceipt
from core.notifications import notification_send
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS
from freeze import services as freeze_services
from program.services.memberships import membership_grant
from tests.conftest import make_user
from tests.freeze.factories import draft_exception
from tests.program.test_notice_routing import people  # noqa: F401  (the fixture)


def open_approval_notices() -> set[str]:
    return set(
        User.objects.filter(
            notification_receipts__notification__event="exception.submitted",
            notification_receipts__done_at__isnull=True,
        ).values_list("username", flat=True)
    )


def submitted(setup: dict, requester: User, **changes):
    exception = draft_exception(requester, setup["trainer"], setup["now"], **changes)
    return freeze_services.exception_submit(actor=requester, exception=exception)


def test_approving_or_rejecting_clears_awaiting_approval_for_everyone(people):  # noqa: F811
    requester = make_user("requester", FRAMEWORK_ENGINEERS)
    make_user("owner", "training-platform")
    first = submitted(people, requester)
    second = submitted(people, requester, title="second")
    assert open_approval_notices() == {"lead_a", "owner", "engineer_a"}
    freeze_services.exception_approve(actor=people["lead_a"], exception=first)  # low risk: one approval
    freeze_services.exception_reject(actor=User.objects.get(username="owner"), exception=second, reason="no")
    assert open_approval_notices() == set()
    cleared = NotificationReceipt.objects.filter(notification__event="exception.submitted")
    assert all(r.read_at is not None and r.done_at is not None for r in cleared)


def test_a_partial_approval_leaves_it_only_with_those_who_may_still_approve(people):  # noqa: F811
    requester = make_user("requester", FRAMEWORK_ENGINEERS)
    make_user("owner", "training-platform")
    exception = submitted(people, requester, risk="high")  # two approvals, a lead among them
    freeze_services.exception_approve(actor=people["engineer"], exception=exception)
    assert exception.status == "submitted"
    # The engineer's verdict stands: they may not approve again, so nothing is left for them to do.
    assert open_approval_notices() == {"lead_a", "owner"}


def test_awaiting_approval_never_reaches_an_author(people):  # noqa: F811
    requester = make_user("requester", FRAMEWORK_ENGINEERS, "training-platform")
    second_lead = make_user("second_lead", PROGRAM_LEADS)
    membership_grant(actor=people["lead_a"], program=people["a"], user=second_lead, role="lead")
    submitted(people, requester)
    told = open_approval_notices()
    assert "requester" not in told and {"lead_a", "second_lead"} <= told


def test_the_inbox_groups_similar_to_dos_and_drops_done_ones(client, lead):
    for i in range(3):
        notification_send(
            event="exception.submitted",
            subject=f"Freeze exception awaiting approval: change {i}",
            body="",
            link=f"/freeze/exceptions/{i}/",
            users=[lead],
        )
    notification_send(event="gate.ready", subject="Gate 'Canary' is ready for review", body="", users=[lead])
    notification_send(event="gate.decided", subject="Gate 'Pilot' passed", body="", users=[lead])
    client.force_login(lead)
    html = client.get("/notifications/").content.decode()
    to_do = html[html.index('data-testid="to-do"') : html.index('data-testid="news"')]
    assert "3 exceptions awaiting your approval" in to_do
    assert "change 0" in to_do and "Gate &#x27;Canary&#x27; is ready for review" in to_do
    assert "Pilot" not in to_do and "Pilot" in html[html.index('data-testid="news"') :]

    from core.services.inbox import notices_clear

    notices_clear(link="/freeze/exceptions/0/", events=["exception.submitted"])
    html = client.get("/notifications/").content.decode()
    to_do = html[html.index('data-testid="to-do"') : html.index('data-testid="news"')]
    assert "2 exceptions awaiting your approval" in to_do and "change 0" not in to_do
    assert "change 0" in html[html.index('data-testid="news"') :]  # still there, marked done


def test_group_titles_say_how_many_of_what():
    from core.inbox_groups import group_title

    assert group_title("exception.submitted", 3) == "3 exceptions awaiting your approval"
    assert group_title("exception.submitted", 1) == "1 exception awaiting your approval"
    assert group_title("exception.submitted", 5, done=True) == "5 approval requests, done"
    assert group_title("gate.ready", 2) == "2 gates ready for your review"
    assert group_title("incident.filed", 4) == "4 incidents filed"
    assert group_title("account.password_reset", 2) == "2 other notices"


def test_reviewing_an_override_clears_it_for_everyone_it_went_to(people):  # noqa: F811
    from datetime import timedelta

    from django.utils import timezone

    override = freeze_services.override_open(
        actor=people["admin"],
        component=people["trainer"],
        reason="hotfix",
        ends_at=timezone.now() + timedelta(hours=2),
    )
    opened = NotificationReceipt.objects.filter(notification__event="override.opened")
    assert {r.user.username for r in opened} == {"lead_a", "engineer_a"}
    freeze_services.override_review(actor=people["lead_a"], override=override, note="looked fine")
    assert not opened.filter(done_at__isnull=True).exists()
