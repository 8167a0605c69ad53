"""The exception workflow: each transition's happy path and every refusal."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.utils import timezone

from core.errors import ApplicationError
from core.models import Transition
from freeze import services
from freeze.models import Approval, FreezeException
from tests.conftest import make_user
from tests.freeze.factories import exception_payload, freeze_setup, submitted_exception

URL = "/api/v1/freeze-exceptions/"


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


def file(client, **changes):
    return client.post(URL, exception_payload(**changes), format="json")


def submitted(as_user, engineer, **changes) -> int:
    pk = file(as_user(engineer), **changes).json()["id"]
    assert as_user(engineer).post(f"{URL}{pk}/submit/").status_code == 200
    return pk


def test_engineer_files_a_draft_on_an_approval_component(as_user, engineer, ref):
    response = file(as_user(engineer))
    assert response.status_code == 201, response.json()
    assert response.json()["status"] == "draft"
    assert response.json()["window"] == ref["window"].pk


def test_frozen_component_is_refused_naming_the_window_and_who_can_change_it(as_user, engineer, ref):
    response = file(as_user(engineer), component="kernels")
    assert response.status_code == 409
    assert "frozen in 'Wave 2'" in response.json()["detail"]
    assert "program lead" in response.json()["detail"]
    assert not FreezeException.objects.exists()


def test_open_component_or_no_window_is_refused_as_unnecessary(as_user, engineer, ref):
    open_one = file(as_user(engineer), component="dashboards")
    assert open_one.status_code == 400 and "needs no exception" in open_one.json()["detail"]
    later = timezone.now() + timedelta(days=30)
    outside = file(
        as_user(engineer),
        change_starts_at=later.isoformat(),
        change_ends_at=(later + timedelta(hours=1)).isoformat(),
    )
    assert outside.status_code == 400 and "no freeze window" in outside.json()["detail"]


@pytest.mark.parametrize(
    ("starts_h", "ends_h", "field"),
    [
        (2, 1, "change_ends_at"),  # ends before it starts
        (-72, 1, "change_starts_at"),  # starts before the freeze window
        (1, 24 * 20, "change_ends_at"),  # ends after the freeze window
    ],
)
def test_change_window_must_lie_inside_the_freeze_window_and_end_after_it_starts(
    as_user, engineer, ref, starts_h, ends_h, field
):
    now = timezone.now()
    response = file(
        as_user(engineer),
        window=ref["window"].pk,
        change_starts_at=(now + timedelta(hours=starts_h)).isoformat(),
        change_ends_at=(now + timedelta(hours=ends_h)).isoformat(),
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field
    assert not FreezeException.objects.exists()


def test_only_framework_engineers_file(as_user, viewer, ref):
    assert file(as_user(viewer)).status_code == 403


def test_submit_fixes_the_required_approvals_and_notifies_approvers(
    as_user, engineer, lead, component_owner, ref, mailoutbox, django_capture_on_commit_callbacks
):
    pk = file(as_user(engineer), risk="high").json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        response = as_user(engineer).post(f"{URL}{pk}/submit/")
    assert response.json()["status"] == "submitted"
    assert response.json()["required_approvals"] == 2
    assert sorted(mailoutbox[0].to) == ["component_owner@example.com", "lead@example.com"]


def test_requester_cannot_approve_own_exception(as_user, engineer, ref):
    engineer.groups.add(Group.objects.get_or_create(name="program-leads")[0])  # even a lead may not
    pk = submitted(as_user, engineer)
    response = as_user(engineer).post(f"{URL}{pk}/approve/")
    assert response.status_code == 403
    assert "someone else" in response.json()["detail"]


def test_last_editor_cannot_approve(as_user, engineer, lead, ref):
    other = make_user("other-engineer", "framework-engineers", "program-leads")
    pk = submitted(as_user, engineer)
    as_user(other).patch(f"{URL}{pk}/", {"title": "Clearer title"}, format="json")
    assert as_user(other).post(f"{URL}{pk}/approve/").status_code == 403


def test_outsiders_cannot_approve(as_user, engineer, viewer, ref):
    pk = submitted(as_user, engineer)
    response = as_user(viewer).post(f"{URL}{pk}/approve/")
    assert response.status_code == 403
    assert "training-platform" in response.json()["detail"]


def test_component_owner_approves_a_medium_risk_exception(
    as_user, engineer, component_owner, ref, mailoutbox, django_capture_on_commit_callbacks
):
    pk = submitted(as_user, engineer)
    with django_capture_on_commit_callbacks(execute=True):
        response = as_user(component_owner).post(f"{URL}{pk}/approve/", {"comment": "ok"}, format="json")
    assert response.json()["status"] == "approved"
    assert mailoutbox[-1].to == ["engineer@example.com"]


def test_one_person_counts_once(as_user, engineer, component_owner, ref):
    pk = submitted(as_user, engineer, risk="high")
    assert as_user(component_owner).post(f"{URL}{pk}/approve/").json()["status"] == "submitted"
    again = as_user(component_owner).post(f"{URL}{pk}/approve/")
    assert again.status_code == 409
    assert "counts once" in again.json()["detail"]


def test_high_risk_needs_two_approvers_one_a_program_lead(as_user, engineer, component_owner, lead, ref):
    second_owner = make_user("owner2", "training-platform")
    pk = submitted(as_user, engineer, risk="high")
    as_user(component_owner).post(f"{URL}{pk}/approve/")
    assert as_user(second_owner).post(f"{URL}{pk}/approve/").json()["status"] == "submitted"  # no lead yet
    assert as_user(lead).post(f"{URL}{pk}/approve/").json()["status"] == "approved"


def test_one_rejection_rejects_and_needs_a_reason(as_user, engineer, component_owner, lead, ref):
    pk = submitted(as_user, engineer, risk="high")
    as_user(lead).post(f"{URL}{pk}/approve/")
    no_reason = as_user(component_owner).post(f"{URL}{pk}/reject/", {}, format="json")
    assert no_reason.status_code == 400 and no_reason.json()["errors"][0]["field"] == "reason"
    rejected = as_user(component_owner).post(f"{URL}{pk}/reject/", {"reason": "not now"}, format="json")
    assert rejected.json()["status"] == "rejected"


def test_material_edit_after_approval_returns_to_submitted_and_dismisses_approvals(
    as_user, engineer, component_owner, ref
):
    pk = submitted(as_user, engineer)
    as_user(component_owner).post(f"{URL}{pk}/approve/")
    edited = as_user(engineer).patch(f"{URL}{pk}/", {"risk": "high"}, format="json")
    assert edited.json()["status"] == "submitted"
    assert edited.json()["required_approvals"] == 2
    assert Approval.objects.get().dismissed_at is not None
    record = Transition.objects.get(action="resubmit")
    assert "risk" in record.reason and record.data["dismissed_approvals"] == 1
    # The earlier approver may review the changed request again.
    assert as_user(component_owner).post(f"{URL}{pk}/approve/").status_code == 200


def test_wording_edit_keeps_the_approval(as_user, engineer, component_owner, ref):
    pk = submitted(as_user, engineer)
    as_user(component_owner).post(f"{URL}{pk}/approve/")
    assert (
        as_user(engineer).patch(f"{URL}{pk}/", {"title": "Typo fixed"}, format="json").json()["status"]
        == "approved"
    )


def test_withdraw_and_revoke(as_user, engineer, component_owner, lead, ref):
    pk = submitted(as_user, engineer)
    as_user(component_owner).post(f"{URL}{pk}/approve/")
    assert (
        as_user(component_owner).post(f"{URL}{pk}/revoke/", {"reason": "x"}, format="json").status_code == 403
    )
    assert as_user(lead).post(f"{URL}{pk}/revoke/", {"reason": ""}, format="json").status_code == 400
    revoked = as_user(lead).post(f"{URL}{pk}/revoke/", {"reason": "incident"}, format="json")
    assert revoked.json()["status"] == "revoked"
    other = file(as_user(engineer)).json()["id"]
    assert as_user(component_owner).post(f"{URL}{other}/withdraw/").status_code == 403
    assert as_user(engineer).post(f"{URL}{other}/withdraw/").json()["status"] == "withdrawn"
    assert as_user(engineer).post(f"{URL}{other}/submit/").status_code == 409


def test_approved_exception_stops_counting_when_its_window_ends(
    as_user, engineer, component_owner, ref, mailoutbox, django_capture_on_commit_callbacks
):
    now = timezone.now()
    pk = submitted(
        as_user,
        engineer,
        change_starts_at=(now - timedelta(hours=2)).isoformat(),
        change_ends_at=(now + timedelta(hours=1)).isoformat(),
    )
    as_user(component_owner).post(f"{URL}{pk}/approve/")
    check = as_user(engineer).get("/api/v1/freeze/check/", {"component": "trainer"}).json()
    assert check["decision"] == "allowed" and check["exception"]["id"] == pk
    # The change window ends: at read time it no longer counts, before any periodic task runs.
    FreezeException.objects.filter(pk=pk).update(change_ends_at=now - timedelta(seconds=1))
    assert (
        as_user(engineer).get("/api/v1/freeze/check/", {"component": "trainer"}).json()["decision"]
        == "needs_approval"
    )
    assert as_user(engineer).get(f"{URL}{pk}/").json()["status"] == "expired"
    with django_capture_on_commit_callbacks(execute=True):
        assert services.exceptions_expire() == [pk]
    assert FreezeException.objects.get(pk=pk).status == "expired"
    assert "expired" in mailoutbox[-1].subject


def test_expiring_within_a_day_warns_the_requester_once(
    as_user, engineer, component_owner, ref, mailoutbox, django_capture_on_commit_callbacks
):
    pk = submitted(as_user, engineer)
    as_user(component_owner).post(f"{URL}{pk}/approve/")
    with django_capture_on_commit_callbacks(execute=True):
        assert services.exceptions_warn_expiring() == [pk]
        assert services.exceptions_warn_expiring() == []
    assert "within 24 h" in mailoutbox[-1].subject


@pytest.mark.django_db(transaction=True)
def test_two_approvers_at_once_never_produce_two_decisions(lead):
    ref = freeze_setup(lead)
    engineer = make_user("engineer", "framework-engineers")
    owner = make_user("owner", "training-platform")
    exception = submitted_exception(engineer, ref["trainer"], ref["now"], risk="medium")
    barrier, results, lock = threading.Barrier(2), [], threading.Lock()

    def act(user, verdict):
        try:
            barrier.wait()
            if verdict == "approve":
                services.exception_approve(actor=user, exception=exception)
            else:
                services.exception_reject(actor=user, exception=exception, reason="no")
            outcome = "ok"
        except ApplicationError as exc:
            outcome = exc.status
        finally:
            connection.close()
        with lock:
            results.append(outcome)

    threads = [
        threading.Thread(target=act, args=(owner, "approve")),
        threading.Thread(target=act, args=(lead, "reject")),
    ]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert sorted(results, key=str) == [409, "ok"]
    final = FreezeException.objects.get(pk=exception.pk)
    assert final.status in ("approved", "rejected")
    assert Transition.objects.filter(action__in=["approve", "reject"], object_id=exception.pk).count() == 1


def test_a_component_key_with_a_nul_character_is_a_400_naming_it(as_user, engineer, ref):
    response = file(as_user(engineer), component="train\u0000er")
    assert response.status_code == 400
    assert [error["field"] for error in response.json()["errors"]] == ["component"]
