"""Separation of duties on freeze exceptions, across edits: nobody who wrote any of an exception —
its requester or anyone who ever edited it — approves or rejects it, and an approver's own edit
withdraws their approval."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import Transition
from freeze.models import Approval, FreezeException
from tests.conftest import make_user
from tests.freeze.factories import exception_payload, freeze_setup
from tests.program.factories import make_lead

URL = "/api/v1/freeze-exceptions/"


@pytest.fixture
def ref(db, lead, request):
    ref = freeze_setup(lead)
    if "lead2" in request.fixturenames:  # roles are per program (issue 25): the second lead leads it too
        make_lead(ref["program"], request.getfixturevalue("lead2"))
    return ref


@pytest.fixture
def helper(db):
    """A framework engineer who also owns the component: may edit, and may approve what they did not write."""
    return make_user("helper", "framework-engineers", "training-platform")


@pytest.fixture
def editing_lead(db):
    """A program lead who is also a framework engineer, so may edit exceptions too."""
    return make_user("editing-lead", "program-leads", "framework-engineers")


def submitted(as_user, engineer, **changes) -> int:
    pk = as_user(engineer).post(URL, exception_payload(**changes), format="json").json()["id"]
    assert as_user(engineer).post(f"{URL}{pk}/submit/").status_code == 200
    return pk


def patch(client, pk, **changes):
    return client.patch(f"{URL}{pk}/", changes, format="json")


def test_someone_who_retitled_cannot_approve_even_after_the_requester_edits_again(
    as_user, engineer, helper, ref
):
    pk = submitted(as_user, engineer)
    assert patch(as_user(helper), pk, title="Clearer title").status_code == 200
    # The requester edits after them: the helper is no longer the last editor, but still an author.
    assert patch(as_user(engineer), pk, title="Clearer title, v2").status_code == 200
    response = as_user(helper).post(f"{URL}{pk}/approve/")
    assert response.status_code == 403
    assert "someone else" in response.json()["detail"]
    assert FreezeException.objects.get(pk=pk).status == "submitted"
    assert not Approval.objects.exists()


def test_someone_who_retitled_cannot_reject_either(as_user, engineer, helper, ref):
    pk = submitted(as_user, engineer)
    patch(as_user(helper), pk, title="Clearer title")
    response = as_user(helper).post(f"{URL}{pk}/reject/", {"reason": "no"}, format="json")
    assert response.status_code == 403
    assert FreezeException.objects.get(pk=pk).status == "submitted"


def test_a_lead_who_authored_a_material_edit_cannot_approve(as_user, engineer, editing_lead, ref):
    pk = submitted(as_user, engineer)
    edited = patch(as_user(editing_lead), pk, change="max_grad_accum 64 -> 256")
    assert edited.json()["status"] == "submitted"
    patch(as_user(engineer), pk, title="Requester has the last word")
    response = as_user(editing_lead).post(f"{URL}{pk}/approve/")
    assert response.status_code == 403
    assert FreezeException.objects.get(pk=pk).status == "submitted"


def test_an_approver_who_edits_withdraws_their_approval_and_may_not_approve_again(
    as_user, engineer, helper, ref
):
    pk = submitted(as_user, engineer)
    assert as_user(helper).post(f"{URL}{pk}/approve/").json()["status"] == "approved"
    # Even a wording edit: the approver is now an author of what they approved.
    edited = patch(as_user(helper), pk, title="Approver's wording")
    assert edited.status_code == 200
    assert edited.json()["status"] == "submitted"
    assert Approval.objects.get().dismissed_at is not None
    record = Transition.objects.get(action="resubmit", object_id=pk)
    assert record.actor == helper and record.data["dismissed_approvals"] == 1
    assert as_user(helper).post(f"{URL}{pk}/approve/").status_code == 403
    check = as_user(engineer).get("/api/v1/freeze/check/", {"component": "trainer"}).json()
    assert check["exception"] is None


def test_an_approvers_edit_of_a_high_risk_exception_keeps_the_other_approval(
    as_user, engineer, helper, lead, ref
):
    pk = submitted(as_user, engineer, risk="high")
    as_user(helper).post(f"{URL}{pk}/approve/")
    assert as_user(lead).post(f"{URL}{pk}/approve/").json()["status"] == "approved"
    edited = patch(as_user(helper), pk, title="Approver's wording")
    assert edited.json()["status"] == "submitted"
    standing = Approval.objects.filter(exception_id=pk, dismissed_at__isnull=True)
    assert [a.approver for a in standing] == [lead]
    second_owner = make_user("owner2", "training-platform")
    assert as_user(second_owner).post(f"{URL}{pk}/approve/").json()["status"] == "approved"


def test_a_wording_edit_by_someone_who_did_not_approve_keeps_the_approval(
    as_user, engineer, helper, component_owner, ref
):
    pk = submitted(as_user, engineer)
    as_user(component_owner).post(f"{URL}{pk}/approve/")
    for author in (engineer, helper):
        edited = patch(as_user(author), pk, title=f"Wording by {author.username}")
        assert edited.json()["status"] == "approved"
    assert Approval.objects.get().dismissed_at is None


def test_saving_unchanged_values_is_no_edit(as_user, engineer, helper, ref):
    """The page's form posts every field: an approver saving it untouched keeps their approval."""
    pk = submitted(as_user, engineer)
    as_user(helper).post(f"{URL}{pk}/approve/")
    current = as_user(engineer).get(f"{URL}{pk}/").json()
    before = Transition.objects.count()
    unchanged = patch(as_user(helper), pk, title=current["title"], risk=current["risk"])
    assert unchanged.json()["status"] == "approved"
    assert unchanged.json()["last_editor"] == "engineer"
    assert Transition.objects.count() == before


def test_raising_an_approved_exception_to_high_risk_needs_two_fresh_approvals(
    as_user, engineer, helper, component_owner, lead, editing_lead, ref
):
    pk = submitted(as_user, engineer)
    as_user(component_owner).post(f"{URL}{pk}/approve/")
    raised = patch(as_user(editing_lead), pk, risk="high")
    assert raised.json()["status"] == "submitted"
    assert raised.json()["required_approvals"] == 2
    assert as_user(editing_lead).post(f"{URL}{pk}/approve/").status_code == 403  # an author
    assert as_user(component_owner).post(f"{URL}{pk}/approve/").json()["status"] == "submitted"
    assert as_user(lead).post(f"{URL}{pk}/approve/").json()["status"] == "approved"


def test_approver_queue_leaves_out_everyone_who_wrote_it(as_user, engineer, helper, ref):
    pk = submitted(as_user, engineer)
    assert [e["id"] for e in as_user(helper).get(URL, {"awaiting": "true"}).json()["results"]] == [pk]
    patch(as_user(helper), pk, title="Clearer title")
    patch(as_user(engineer), pk, title="Clearer title, v2")
    assert as_user(helper).get(URL, {"awaiting": "true"}).json()["results"] == []


def test_the_sweep_expires_an_exception_nobody_decided_before_its_change_window_ended(as_user, engineer, ref):
    from freeze import services

    pk = submitted(as_user, engineer)
    now = timezone.now()
    FreezeException.objects.filter(pk=pk).update(
        change_starts_at=now - timedelta(hours=2), change_ends_at=now - timedelta(seconds=1)
    )
    assert as_user(engineer).get(f"{URL}{pk}/").json()["status"] == "expired"
    assert services.exceptions_expire() == [pk]
    assert FreezeException.objects.get(pk=pk).status == "expired"


def test_a_change_window_that_has_already_ended_is_refused(as_user, engineer, ref):
    now = timezone.now()
    response = as_user(engineer).post(
        URL,
        exception_payload(
            change_starts_at=(now - timedelta(hours=3)).isoformat(),
            change_ends_at=(now - timedelta(hours=1)).isoformat(),
        ),
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "change_ends_at"
    assert not FreezeException.objects.exists()


def test_an_authors_approval_never_counts_however_it_got_there(as_user, engineer, helper, lead2, ref):
    # Data from before the authors rule: the helper approved a high-risk exception, then edited it.
    pk = submitted(as_user, engineer, risk="high")
    exception = FreezeException.objects.get(pk=pk)
    Approval.objects.create(exception=exception, approver=helper, verdict="approve", as_program_lead=False)
    exception.authors.add(helper)
    # One lead's approval is then one of the two that high risk needs, not the second.
    assert as_user(lead2).post(f"{URL}{pk}/approve/").status_code == 200
    assert FreezeException.objects.get(pk=pk).status == "submitted"
