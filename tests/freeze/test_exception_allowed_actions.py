"""One allowed-actions answer per person: the buttons, the queues, the notification recipients and the
services all follow it (issue 12)."""

from __future__ import annotations

import re

import pytest

from core.models import NotificationReceipt
from freeze import services
from freeze.models import FreezeException
from freeze.selectors import exceptions_awaiting
from freeze.selectors.exceptions import exception_allowed_actions, exception_approvers
from freeze.services import exception_workflow
from tests.conftest import make_user
from tests.freeze.factories import draft_exception, freeze_setup, submitted_exception

BUTTONS = {
    "submit": "Submit for approval",
    "approve": "Approve",
    "reject": "Reject",
    "withdraw": "Withdraw",
    "revoke": "Revoke",
}


@pytest.fixture
def cast(db, lead, engineer, component_owner, viewer, django_capture_on_commit_callbacks):
    """A submitted exception materially edited (so submitted again) by a second engineer who is also in
    the owner team."""
    ref = freeze_setup(lead)
    editor = make_user("editor", "framework-engineers", "training-platform")
    teammate = make_user("teammate", "training-platform")
    with django_capture_on_commit_callbacks(execute=True):
        exception = submitted_exception(engineer, ref["trainer"], ref["now"])
        services.exception_edit(actor=editor, exception=exception, changes={"change": "c2"})
    exception = FreezeException.objects.get(pk=exception.pk)
    people = {
        "requester": engineer,
        "editor": editor,
        "owner-team member": component_owner,
        "lead": lead,
        "outsider": viewer,
    }
    return exception, people, teammate


EXPECTED = {
    "requester": {"edit", "withdraw"},
    "editor": {"edit"},
    "owner-team member": {"approve", "reject"},
    "lead": {"approve", "reject", "revoke"},
    "outsider": set(),
}


def _allowed(user, exception):
    actions = exception_allowed_actions(user, exception)
    return {a for a in ("edit", "submit", "approve", "reject", "withdraw", "revoke") if getattr(actions, a)}


@pytest.mark.parametrize("role", list(EXPECTED))
def test_each_role_gets_its_actions(cast, role):
    exception, people, _ = cast
    allowed = _allowed(people[role], exception)
    # revoke needs an approved exception: the lead may revoke (actor) but not yet (state)
    assert allowed == EXPECTED[role] - {"revoke"}
    assert exception_allowed_actions(people[role], exception).may("revoke") is (role == "lead")


@pytest.mark.parametrize("role", list(EXPECTED))
def test_the_page_shows_exactly_the_allowed_buttons(client, cast, role):
    exception, people, _ = cast
    client.force_login(people[role])
    html = client.get(f"/freeze/exceptions/{exception.pk}/").content.decode()
    shown = {action for action, label in BUTTONS.items() if re.search(rf">{label}</button>", html)}
    assert shown == _allowed(people[role], exception) - {"edit"}
    assert (f"/freeze/exceptions/{exception.pk}/edit/" in html) is (
        "edit" in _allowed(people[role], exception)
    )


@pytest.mark.parametrize("role", list(EXPECTED))
def test_the_queue_is_who_may_approve(cast, role):
    exception, people, _ = cast
    in_queue = exceptions_awaiting(people[role]).filter(pk=exception.pk).exists()
    assert in_queue is ("approve" in _allowed(people[role], exception))


def test_notifications_reach_only_people_who_may_approve(cast):
    """The editor is in the owner team but wrote part of it: the review-again notice after their edit
    never reaches them, nor the requester."""
    exception, people, teammate = cast
    notified = set(
        NotificationReceipt.objects.filter(notification__subject__startswith="Exception changed").values_list(
            "user__username", flat=True
        )
    )
    assert notified, "submission notified someone"
    for username in notified:
        user = next((u for u in (*people.values(), teammate) if u.username == username), None)
        assert user is not None and exception_allowed_actions(user, exception).approve, username
    assert "editor" not in notified and "engineer" not in notified
    assert {u.username for u in exception_approvers(exception)} == {"component_owner", "lead", "teammate"}


def test_an_approver_who_decided_leaves_the_queue_and_the_approver_list(cast, lead, engineer):
    exception, people, _ = cast
    FreezeException.objects.filter(pk=exception.pk).update(risk="high", required_approvals=2)
    exception = FreezeException.objects.get(pk=exception.pk)
    services.exception_approve(actor=people["owner-team member"], exception=exception)
    exception = FreezeException.objects.get(pk=exception.pk)
    assert not exceptions_awaiting(people["owner-team member"]).filter(pk=exception.pk).exists()
    assert people["owner-team member"] not in exception_approvers(exception)
    assert exceptions_awaiting(lead).filter(pk=exception.pk).exists()


def test_exception_act_serves_the_page_and_the_api_alike(monkeypatch, client, as_user, db, lead, engineer):
    """Both entries call the one service and end in the same state."""
    calls = []
    real = services.exception_act

    def spy(**kwargs):
        calls.append(kwargs["action"])
        return real(**kwargs)

    monkeypatch.setattr(services, "exception_act", spy)
    ref = freeze_setup(lead)
    one = draft_exception(engineer, ref["trainer"], ref["now"], title="a")
    two = FreezeException.objects.get(pk=one.pk)
    two.pk = None
    two.save()
    two.authors.add(engineer)
    client.force_login(engineer)
    assert client.post(f"/freeze/exceptions/{one.pk}/submit/").status_code == 302
    assert as_user(engineer).post(f"/api/v1/freeze-exceptions/{two.pk}/submit/").status_code == 200
    assert calls == ["submit", "submit"]
    one.refresh_from_db()
    two.refresh_from_db()
    assert (one.status, one.required_approvals) == (two.status, two.required_approvals) == ("submitted", 1)


def test_refusals_are_the_same_on_the_page_and_the_api(client, as_user, cast):
    exception, people, _ = cast
    client.force_login(people["editor"])
    page = client.post(f"/freeze/exceptions/{exception.pk}/approve/")
    api = as_user(people["editor"]).post(f"/api/v1/freeze-exceptions/{exception.pk}/approve/")
    assert page.status_code == api.status_code == 403
    assert "someone else must approve" in page.content.decode()
    assert "someone else must approve" in str(api.json())


def test_messages_are_spelled_not_glued():
    """No "submited" or "withdrawed": the words come from a table."""
    words = {*exception_workflow.PAST_PARTICIPLE.values(), *exception_workflow.GERUND.values()}
    assert {"submitted", "withdrawn", "submitting"} <= words
    assert not {"submited", "withdrawed", "withdrawned"} & words
    for method in exception_workflow.PAST_PARTICIPLE:
        assert hasattr(FreezeException, method)


def test_a_refused_transition_names_the_state_in_words(db, lead, engineer):
    ref = freeze_setup(lead)
    exception = submitted_exception(engineer, ref["trainer"], ref["now"])
    with pytest.raises(Exception) as refused:
        services.exception_act(actor=engineer, exception=exception, action="submit")
    assert "submitting is allowed only when it is draft" in str(refused.value)
    assert "submited" not in str(refused.value)
