"""Notices reach the people of the program concerned (issue 25): gate notices go to the program's members,
"awaiting approval" only to those who may approve now and whom it concerns, override notices to the owner
team and the leads of the programs whose freeze it lifts, and acting on a notice marks it read."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.utils import timezone

from core.models import Delivery, Notification, NotificationReceipt
from core.policies import may_manage_webhooks
from core.roles import FRAMEWORK_ENGINEERS, PLATFORM_ADMINS, PROGRAM_LEADS
from freeze import services as freeze_services
from freeze.models import Component, FreezeWindow
from program import services
from program.models import Gate
from program.services.memberships import membership_grant
from tests.conftest import make_user, wait_for
from tests.freeze.factories import draft_exception, freeze_setup
from tests.program.factories import make_program


def received(user: User, event: str) -> list[Notification]:
    return list(Notification.objects.filter(event=event, receipts__user=user))


@pytest.fixture
def people(db):
    """Program A (its lead, an engineer member) and program B (its own lead); an organisation-wide
    program creator who is in no program, and a platform admin who is in none either."""
    lead_a = make_user("lead_a", PROGRAM_LEADS)
    lead_b = make_user("lead_b", PROGRAM_LEADS)
    creator = make_user("creator", PROGRAM_LEADS)  # may create programs; in neither
    admin = make_user("admin", PLATFORM_ADMINS)
    engineer = make_user("engineer_a", FRAMEWORK_ENGINEERS, "training-platform")
    setup = freeze_setup(lead_a)  # program A ("rebuild"), a window in force, components
    program_a = setup["program"]
    membership_grant(actor=lead_a, program=program_a, user=engineer, role="engineer")
    program_b = make_program(lead_b, slug="serving")
    return {
        **setup,
        "a": program_a,
        "b": program_b,
        "lead_a": lead_a,
        "lead_b": lead_b,
        "creator": creator,
        "admin": admin,
        "engineer": engineer,
    }


def test_a_gate_decision_reaches_the_members_of_its_program_and_nobody_else(people):
    gate = Gate.objects.filter(phase__program=people["a"]).order_by("pk").first()
    services.gate_decide(gate=gate, actor=people["lead_a"], decision="waive", note="known risk")
    hearing = {
        name: bool(received(people[name], "gate.decided"))
        for name in ("lead_a", "engineer", "lead_b", "creator", "admin")
    }
    assert hearing == {"lead_a": True, "engineer": True, "lead_b": False, "creator": False, "admin": False}
    assert Notification.objects.get(event="gate.decided").program_key == "rebuild"


def test_deciding_a_gate_clears_ready_for_review_for_every_lead_it_went_to(people):
    gate = Gate.objects.filter(phase__program=people["a"]).order_by("pk").first()
    second = make_user("second_a", PROGRAM_LEADS)
    membership_grant(actor=people["lead_a"], program=people["a"], user=second, role="lead")
    link = f"/programs/gates/{gate.pk}/"
    from core.notifications import notification_send

    notification_send(
        event="gate.ready", subject="ready", body="", link=link, users=[people["lead_a"], second]
    )
    services.gate_decide(gate=gate, actor=people["lead_a"], decision="waive", note="known risk")
    done = {
        receipt.user.username: (receipt.read_at is not None, receipt.done_at is not None)
        for receipt in NotificationReceipt.objects.filter(notification__event="gate.ready").select_related(
            "user"
        )
    }
    # The decision is what "ready for review" asked for: nobody has it left to do (issue 29).
    assert done == {"lead_a": (True, True), "second_a": (True, True)}


def test_awaiting_approval_reaches_the_owner_team_and_this_programs_leads_only(people):
    requester = make_user("requester", FRAMEWORK_ENGINEERS)
    make_user("owner", "training-platform")
    exception = draft_exception(requester, people["trainer"], people["now"], risk="high")
    freeze_services.exception_submit(actor=requester, exception=exception)
    told = {
        n.username
        for n in User.objects.filter(notification_receipts__notification__event="exception.submitted")
    }
    # The engineer is in the owner team too; the lead of B, the creator and the platform admin may not
    # approve for program A's window or are not asked to.
    assert told == {"lead_a", "owner", "engineer_a"}
    assert Notification.objects.get(event="exception.submitted").program_key == "rebuild"


def test_an_override_reaches_the_owners_and_the_leads_whose_freeze_it_lifts(people):
    freeze_services.override_open(
        actor=people["admin"],
        component=people["trainer"],
        reason="hotfix",
        ends_at=timezone.now() + timedelta(hours=2),
    )
    told = {
        n.username for n in User.objects.filter(notification_receipts__notification__event="override.opened")
    }
    assert told == {"lead_a", "engineer_a"}  # A's window is in force; B has none; the creator is in neither


def test_a_lead_manages_the_webhook_endpoints_of_their_own_program_only(people):
    assert may_manage_webhooks(people["lead_a"], "rebuild")
    assert not may_manage_webhooks(people["lead_a"], "serving")
    assert not may_manage_webhooks(people["lead_a"], "")  # every program: platform admins only
    assert not may_manage_webhooks(people["creator"], "rebuild")
    assert may_manage_webhooks(people["admin"], "serving") and may_manage_webhooks(people["admin"], "")


@pytest.mark.services
def test_with_the_real_worker_someone_in_no_program_gets_no_notice_of_its_gates(celery_worker_real):
    lead_a = make_user("lead_a", PROGRAM_LEADS)
    outsider = make_user("outsider", PROGRAM_LEADS)  # may create programs, leads none of them
    from tests.program.factories import metrics_for_template

    metrics_for_template()
    program = make_program(lead_a)
    FreezeWindow.objects.filter(program=program).delete()
    Component.objects.all().delete()
    gate = Gate.objects.filter(phase__program=program).order_by("pk").first()
    services.gate_decide(gate=gate, actor=lead_a, decision="waive", note="known risk")
    notice = Notification.objects.get(event="gate.decided")
    assert wait_for(
        lambda: Delivery.objects.filter(notification=notice, status=Delivery.Status.DELIVERED).exists()
    ), "the worker did not deliver the notice"
    assert set(notice.receipts.values_list("user__username", flat=True)) == {"lead_a"}
    sent_to = {address for message in mail.outbox for address in message.to}
    assert lead_a.email in sent_to and outsider.email not in sent_to
