"""The "My work" home page: each section for each role, its empty states, constant queries."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.notifications import notification_send
from freeze import services as freeze_services
from program.models import Gate
from tests.freeze.factories import freeze_setup, submitted_exception
from tests.program.factories import make_program


@pytest.fixture
def ref(lead):
    return freeze_setup(lead)


def section(html: str, anchor: str) -> str:
    """The text of one <section id=…> of the page."""
    start = html.index(f'id="{anchor}"')
    return html[start : html.index("</section>", start)]


def home(client, user) -> str:
    client.force_login(user)
    response = client.get("/")
    assert response.status_code == 200
    return response.content.decode()


def mark(status: str = "ready", *, stale: bool = False, program=None, count: int = 1) -> list[Gate]:
    """Test data: gates put in a state directly (how they got there is tested elsewhere)."""
    gates = Gate.objects.filter(status="open").order_by("pk")
    if program is not None:
        gates = gates.filter(phase__program=program)
    chosen = list(gates[:count])
    Gate.objects.filter(pk__in=[g.pk for g in chosen]).update(status=status, stale=stale)
    return chosen


def test_anonymous_goes_to_login(client, db):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_everything_empty_says_so(client, viewer, ref):
    html = home(client, viewer)
    assert "Program leads decide gates; nothing here waits for you." in section(html, "ready-gates")
    assert "No freeze exception waits for your approval." in section(html, "awaiting")
    assert "You have no open freeze exceptions." in section(html, "my-exceptions")
    assert "No gate in a program you lead" in section(html, "stale-gates")
    assert "No notifications yet." in section(html, "my-notifications")


def test_a_lead_sees_ready_gates_of_the_programs_they_lead_and_stale_gates_of_their_own(
    client, lead, lead2, ref
):
    other = make_program(lead2, slug="other")
    (others_gate,) = mark(program=other)
    (own_gate,) = mark(program=ref["program"])
    (stale_own,) = mark("open", stale=True, program=ref["program"])
    mark("open", stale=True, program=other)
    html = home(client, lead)
    ready = section(html, "ready-gates")
    # Roles are per program (issue 25): a lead decides the gates of the programs they lead only.
    assert f"/programs/gates/{own_gate.pk}/" in ready and f"/programs/gates/{others_gate.pk}/" not in ready
    assert "your program" in ready
    stale = section(html, "stale-gates")
    assert f"/programs/gates/{stale_own.pk}/" in stale and stale.count("<li>") == 1


def test_a_decided_stale_gate_and_a_completed_programs_gate_wait_for_nobody(client, lead, ref):
    mark("passed", stale=True, program=ref["program"])
    ref["program"].status = "completed"
    ref["program"].save()
    mark(program=ref["program"])
    html = home(client, lead)
    assert "No gate is ready for a decision." in section(html, "ready-gates")
    assert "No gate in a program you lead" in section(html, "stale-gates")


def test_exceptions_awaiting_follow_the_freeze_apps_approver_rule(
    client, lead, engineer, component_owner, ref
):
    exception = submitted_exception(engineer, ref["trainer"], ref["now"], title="Bump NCCL")
    link = f"/freeze/exceptions/{exception.pk}/"
    assert link in section(home(client, component_owner), "awaiting")  # owner team of the component
    assert link in section(home(client, lead), "awaiting")  # program leads approve anything
    assert link not in section(home(client, engineer), "awaiting")  # never one's own
    freeze_services.exception_approve(actor=component_owner, exception=exception)
    assert link not in section(home(client, component_owner), "awaiting")


def test_my_exceptions_are_the_requesters_open_ones(client, lead, engineer, ref):
    mine = submitted_exception(engineer, ref["trainer"], ref["now"], title="Bump NCCL")
    withdrawn = submitted_exception(engineer, ref["trainer"], ref["now"], title="Old idea")
    freeze_services.exception_withdraw(actor=engineer, exception=withdrawn)
    html = section(home(client, engineer), "my-exceptions")
    assert "Bump NCCL" in html and f"/freeze/exceptions/{mine.pk}/" in html
    assert "Old idea" not in html
    assert "Bump NCCL" not in section(home(client, lead), "my-exceptions")


def test_latest_notifications_link_to_the_inbox_and_can_be_marked_read(client, lead, ref):
    notification_send(
        event="gate.ready", subject="Gate X is ready", body="b", link="/programs/", users=[lead]
    )
    html = home(client, lead)
    notes = section(html, "my-notifications")
    assert "Gate X is ready" in notes and "(1 unread)" in notes and "Mark read" in notes


def grow(ref, lead, engineer, size: int) -> None:
    """About `size` ready gates, stale gates, exceptions waiting and notifications."""
    for p in range(max(1, size // 2)):
        program = make_program(lead, slug=f"grown-{size}-{p}")
        mark(program=program, count=2)
        mark("open", stale=True, program=program, count=2)
    for i in range(size):
        submitted_exception(
            engineer, ref["trainer"], ref["now"] + timedelta(minutes=i), title=f"e{size}-{i}", risk="high"
        )
        notification_send(
            event="gate.ready", subject=f"n{size}-{i}", body="b", link="/programs/", users=[lead, engineer]
        )


# The approval queue is one query for its candidates (with authors and verdicts) and one for the list,
# derived from exception_allowed_actions (issue 12); nobody awaited (the engineer) skips the second.
@pytest.mark.parametrize("who, expected", [("lead", 12), ("engineer", 9)])
def test_home_runs_the_same_queries_for_few_and_many_items(
    client, request, django_assert_num_queries, lead, engineer, ref, who, expected
):
    """session, user, groups, the user's program memberships (issue 25), unread count, one per section
    and the background heartbeat; no gate query for whoever decides no gates."""
    client.force_login(request.getfixturevalue(who))
    grow(ref, lead, engineer, 1)
    client.get("/")  # warm process-wide caches
    with django_assert_num_queries(expected):
        assert client.get("/").status_code == 200
    grow(ref, lead, engineer, 12)
    with django_assert_num_queries(expected):
        html = client.get("/").content.decode()
    assert "n12-11" in html  # the many items are there
    assert ("More in the programs" in section(html, "ready-gates")) is (who == "lead")


def test_the_api_answers_the_same_lists(as_user, lead, engineer, ref):
    (gate,) = mark(program=ref["program"])
    exception = submitted_exception(engineer, ref["trainer"], ref["now"], title="Bump NCCL")
    notification_send(
        event="gate.ready", subject="Ready", body="b", link=f"/programs/gates/{gate.pk}/", users=[lead]
    )
    body = as_user(lead).get("/api/v1/me/work/").json()
    assert [(g["id"], g["link"]) for g in body["ready_gates"]["items"]] == [
        (gate.pk, f"/programs/gates/{gate.pk}/")
    ]
    assert [e["id"] for e in body["exceptions_awaiting"]["items"]] == [exception.pk]
    assert body["exceptions_awaiting"]["items"][0]["link"] == f"/freeze/exceptions/{exception.pk}/"
    assert body["my_exceptions"] == {"items": [], "more": False}
    assert body["stale_gates"] == {"items": [], "more": False}
    assert [n["subject"] for n in body["notifications"]["items"]] == [
        "Ready",
        "Freeze exception awaiting approval: Bump NCCL",
    ]
    assert body["unread_notifications"] == 2
    mine = as_user(engineer).get("/api/v1/me/work/").json()
    assert [e["title"] for e in mine["my_exceptions"]["items"]] == ["Bump NCCL"]
    assert mine["ready_gates"]["items"] == [] and mine["exceptions_awaiting"]["items"] == []


def test_the_api_runs_the_same_queries_for_few_and_many(
    as_user, lead, engineer, ref, django_assert_num_queries
):
    client = as_user(lead)
    grow(ref, lead, engineer, 1)
    client.get("/api/v1/me/work/")
    # One per section and the unread count (the forced user object keeps its groups from the first call),
    # and the approval queue's candidates.
    with django_assert_num_queries(7):
        client.get("/api/v1/me/work/")
    grow(ref, lead, engineer, 12)
    with django_assert_num_queries(7):
        assert client.get("/api/v1/me/work/").json()["ready_gates"]["more"] is True
