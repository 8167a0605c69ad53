"""The exception pages (issue 12): the all-exceptions list, the form's level hint and 24-hour UTC
inputs, human field names, the edit breadcrumb, who may approve, and flash messages shown once."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from freeze import services
from freeze.models import FreezeException
from freeze.pages.exceptions import PAGE_SIZE
from tests.conftest import make_user
from tests.freeze.factories import draft_exception, freeze_setup, submitted_exception

ALL = "/freeze/exceptions/"


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


def _file(engineer, ref, n: int, **changes):
    return [
        submitted_exception(engineer, ref["trainer"], ref["now"], title=f"x{i}", **changes) for i in range(n)
    ]


def _ids(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'href="/freeze/exceptions/(\d+)/">#', html)]


def test_all_exceptions_filter_on_the_effective_status(client, viewer, engineer, component_owner, ref):
    ended, live = _file(engineer, ref, 2)
    for exception in (ended, live):
        services.exception_approve(actor=component_owner, exception=exception)
    FreezeException.objects.filter(pk=ended.pk).update(
        change_starts_at=timezone.now() - timedelta(hours=2),
        change_ends_at=timezone.now() - timedelta(minutes=1),
    )
    client.force_login(viewer)
    assert _ids(client.get(ALL, {"status": "approved"}).content.decode()) == [live.pk]
    assert _ids(client.get(ALL, {"status": "expired"}).content.decode()) == [ended.pk]


def test_all_exceptions_filter_by_component_risk_window_and_requester(client, viewer, engineer, lead, ref):
    other = make_user("other-engineer", "framework-engineers")
    low = _file(engineer, ref, 1)[0]
    high = _file(other, ref, 1, risk="high")[0]
    client.force_login(viewer)
    assert _ids(client.get(ALL, {"risk": "high"}).content.decode()) == [high.pk]
    assert _ids(client.get(ALL, {"requester": "engineer"}).content.decode()) == [low.pk]
    assert sorted(
        _ids(client.get(ALL, {"component": "trainer", "window": ref["window"].pk}).content.decode())
    ) == [
        low.pk,
        high.pk,
    ]
    assert _ids(client.get(ALL, {"component": "dashboards"}).content.decode()) == []


def test_counts_count_exceptions_not_approvals(client, viewer, engineer, component_owner, lead, ref):
    exception = _file(engineer, ref, 1, risk="high")[0]
    services.exception_approve(actor=component_owner, exception=exception)
    services.exception_approve(actor=lead, exception=exception)
    client.force_login(viewer)
    html = client.get(ALL, {"component": "trainer"}).content.decode()
    assert re.search(r'data-status="approved">.*?<span class="count">1<', html)


def test_all_exceptions_count_each_status_and_page(client, viewer, engineer, ref):
    drafts = PAGE_SIZE + 2
    for i in range(drafts):
        draft_exception(engineer, ref["trainer"], ref["now"], title=f"d{i}")
    _file(engineer, ref, 1)
    client.force_login(viewer)
    html = client.get(ALL).content.decode()
    assert re.search(r'data-status="draft">.*?<span class="count">' + str(drafts) + "<", html)
    assert re.search(r'data-status="submitted">.*?<span class="count">1<', html)
    assert len(_ids(html)) == PAGE_SIZE and "Page 1 of 2" in html
    second = client.get(ALL, {"page": 2}).content.decode()
    assert len(_ids(second)) == drafts + 1 - PAGE_SIZE
    filtered = client.get(ALL, {"status": "draft", "page": 2}).content.decode()
    assert len(_ids(filtered)) == drafts - PAGE_SIZE and "status=draft&amp;page=1" in filtered


def test_all_exceptions_page_runs_the_same_queries_for_few_and_many(
    client, viewer, engineer, ref, django_assert_num_queries
):
    """session, user, groups, the user's program memberships (which private programs they read),
    unread count, filter choices (component, window, requester), counts per status, page count, page
    rows: eleven, whatever the number of exceptions."""
    client.force_login(viewer)
    _file(engineer, ref, 1)
    client.get(ALL)
    with django_assert_num_queries(11):
        client.get(ALL, {"status": "submitted", "risk": "low"})
    _file(engineer, ref, 30)
    with django_assert_num_queries(11):
        html = client.get(ALL, {"status": "submitted", "risk": "low"}).content.decode()
    assert len(_ids(html)) == PAGE_SIZE


def test_the_picker_options_show_each_components_level(client, engineer, ref):
    client.force_login(engineer)
    html = client.get("/freeze/exceptions/new/").content.decode()
    assert re.search(r"<option[^>]*>trainer \(trainer\)[^<]*approval now</option>", html)
    assert re.search(r"<option[^>]*>kernels \(kernels\)[^<]*frozen now</option>", html)
    assert re.search(r"<option[^>]*>dashboards \(dashboards\)[^<]*open now</option>", html)


@pytest.mark.parametrize(
    "component, says",
    [
        ("trainer", "An exception is needed"),
        ("kernels", "no exception can be filed"),
        ("dashboards", "needs no exception"),
    ],
)
def test_the_level_hint_says_what_filing_will_meet(client, engineer, ref, component, says):
    client.force_login(engineer)
    start = ref["now"] + timedelta(hours=1)
    fragment = client.get(
        "/freeze/exceptions/level/",
        {
            "component": component,
            "window": ref["window"].pk,
            "change_starts_at_0": f"{start:%Y-%m-%d}",
            "change_starts_at_1": f"{start:%H:%M}",
        },
    ).content.decode()
    assert says in fragment and "Wave 2" in fragment


def test_the_level_hint_outside_every_window_is_open(client, engineer, ref):
    client.force_login(engineer)
    later = ref["window"].ends_at + timedelta(days=2)
    fragment = client.get(
        "/freeze/exceptions/level/", {"component": "trainer", "change_starts_at_0": f"{later:%Y-%m-%d}"}
    ).content.decode()
    assert "no freeze window is in force" in fragment and "needs no exception" in fragment


def test_times_are_shown_and_read_on_a_24_hour_clock(client, engineer, ref):
    exception = _file(engineer, ref, 1)[0]
    afternoon = ref["now"].replace(hour=14, minute=30, second=0, microsecond=0)
    if afternoon <= ref["now"]:
        afternoon += timedelta(days=1)
    FreezeException.objects.filter(pk=exception.pk).update(
        change_starts_at=afternoon, change_ends_at=afternoon + timedelta(hours=3)
    )
    client.force_login(engineer)
    html = client.get(f"/freeze/exceptions/{exception.pk}/edit/").content.decode()
    start_time = re.search(r'<input[^>]*name="change_starts_at_1"[^>]*>', html).group(0)
    assert 'value="14:30"' in start_time and 'type="text"' in start_time and "pattern=" in start_time
    assert 'value="17:30"' in re.search(r'<input[^>]*name="change_ends_at_1"[^>]*>', html).group(0)
    assert 'type="date"' in re.search(r'<input[^>]*name="change_starts_at_0"[^>]*>', html).group(0)
    assert "datetime-local" not in html and " PM" not in html and " AM" not in html


def test_a_12_hour_time_is_refused_in_words(client, engineer, ref):
    client.force_login(engineer)
    start = ref["now"] + timedelta(days=1)
    data = {
        "component": "trainer",
        "title": "t",
        "change": "c",
        "justification": "j",
        "risk": "low",
        "rollback_plan": "r",
        "change_starts_at_0": f"{start:%Y-%m-%d}",
        "change_starts_at_1": "2:30 PM",
        "change_ends_at_0": f"{start:%Y-%m-%d}",
        "change_ends_at_1": "23:00",
    }
    response = client.post("/freeze/exceptions/new/", data)
    html = response.content.decode()
    assert response.status_code == 400
    assert "Change starts (UTC): Enter a date and a 24-hour UTC time as HH:MM" in html
    data["change_starts_at_1"] = "22:00"
    assert client.post("/freeze/exceptions/new/", data).status_code == 302
    filed = FreezeException.objects.get(title="t")
    assert (filed.change_starts_at.hour, filed.change_ends_at.hour) == (22, 23)


def test_service_errors_name_fields_in_words(client, engineer, ref):
    client.force_login(engineer)
    start = ref["now"] + timedelta(days=1)
    data = {
        "component": "trainer",
        "title": "t",
        "change": "c",
        "justification": "j",
        "risk": "low",
        "rollback_plan": "r",
        "change_starts_at_0": f"{start:%Y-%m-%d}",
        "change_starts_at_1": "10:00",
        "change_ends_at_0": f"{start:%Y-%m-%d}",
        "change_ends_at_1": "09:00",
    }
    html = client.post("/freeze/exceptions/new/", data).content.decode()
    assert "Change ends (UTC): The change end must be after the change start." in html
    assert not re.search(r"change_(starts|ends)_at (must|has)", html)


def test_the_edit_breadcrumb_says_edit(client, engineer, ref):
    exception = _file(engineer, ref, 1)[0]
    client.force_login(engineer)
    html = client.get(f"/freeze/exceptions/{exception.pk}/edit/").content.decode()
    crumb = re.search(r'<nav class="muted small breadcrumb".*?</nav>', html, re.S).group(0)
    assert f"Edit exception #{exception.pk}" in crumb and "new exception" not in crumb.lower()
    new = client.get("/freeze/exceptions/new/").content.decode()
    assert "File a freeze exception" in re.search(
        r'<nav class="muted small breadcrumb".*?</nav>', new, re.S
    ).group(0)


def test_the_page_says_who_may_approve_and_what_is_still_needed(client, engineer, component_owner, lead, ref):
    make_user("alice", "training-platform")
    exception = _file(engineer, ref, 1, risk="high")[0]
    client.force_login(engineer)
    html = client.get(f"/freeze/exceptions/{exception.pk}/").content.decode()
    may = re.search(r'data-testid="may-approve">(.*?)<span', html, re.S).group(1)
    assert [n.strip() for n in may.split(",")] == ["alice", "component_owner", "lead"]
    assert (
        "2 more approvals from: alice, component_owner (training-platform) or any program lead (lead), at least one of them a program lead."
        in html
    )
    services.exception_approve(actor=component_owner, exception=exception)
    html = client.get(f"/freeze/exceptions/{exception.pk}/").content.decode()
    assert "1 more approval from a program lead: lead." in html
    assert "component_owner" not in re.search(r'data-testid="may-approve">(.*?)<span', html, re.S).group(1)


def test_a_flash_message_shows_once(client, engineer, ref):
    """The draft's "Draft saved" is consumed by the page that shows it; the htmx submit answers with
    its own message only, swapped into the one message region (out of band)."""
    client.force_login(engineer)
    start = ref["now"] + timedelta(hours=1)
    data = {
        "component": "trainer",
        "title": "flash",
        "change": "c",
        "justification": "j",
        "risk": "low",
        "rollback_plan": "r",
        "change_starts_at_0": f"{start:%Y-%m-%d}",
        "change_starts_at_1": f"{start:%H:%M}",
        "change_ends_at_0": f"{(start + timedelta(hours=2)):%Y-%m-%d}",
        "change_ends_at_1": f"{(start + timedelta(hours=2)):%H:%M}",
    }
    page = client.post("/freeze/exceptions/new/", data, follow=True).content.decode()
    assert page.count("Draft saved") == 1
    pk = FreezeException.objects.get(title="flash").pk
    swapped = client.post(f"/freeze/exceptions/{pk}/submit/", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="flash" role="status" aria-live="polite" hx-swap-oob="true"' in swapped
    assert swapped.count("Submitted: the approvers") == 1 and "Draft saved" not in swapped
    assert (
        "Submitted"
        not in client.get(f"/freeze/exceptions/{pk}/").content.decode().split("<main")[1].split("<h1")[0]
    )


def test_the_edit_page_shows_the_level_hint_for_its_component(client, engineer, ref):
    exception = _file(engineer, ref, 1)[0]
    client.force_login(engineer)
    html = client.get(f"/freeze/exceptions/{exception.pk}/edit/").content.decode()
    hint = re.search(r'<div id="level-hint".*?</div>', html, re.S).group(0)
    assert "trainer</strong> is at level" in hint and "An exception is needed" in hint
    assert "?component=trainer&amp;window=" in hint  # the disabled pickers are not sent: the URL carries them


def test_the_exception_page_runs_the_same_queries_for_few_and_many_reviewers(
    client, engineer, lead, component_owner, ref, django_assert_num_queries
):
    """session, user, groups, the user's program memberships, unread count, the exception, its authors,
    approvals and their approvers, its gate metrics, their expected impacts, the approver candidates
    and their groups, the history, and what CI sees (the freeze check's four): eighteen, however many
    people are involved."""
    exception = _file(engineer, ref, 1, risk="high")[0]
    services.exception_approve(actor=component_owner, exception=exception)
    client.force_login(lead)
    client.get(f"/freeze/exceptions/{exception.pk}/")
    with django_assert_num_queries(18):
        client.get(f"/freeze/exceptions/{exception.pk}/")
    for i in range(5):
        member = make_user(f"member{i}", "training-platform")
        editor = make_user(f"editor{i}", "framework-engineers")
        services.exception_edit(actor=editor, exception=exception, changes={"title": f"t{i}"})
        if i < 2:
            exception.refresh_from_db()
            services.exception_approve(actor=member, exception=exception)
    with django_assert_num_queries(18):
        html = client.get(f"/freeze/exceptions/{exception.pk}/").content.decode()
    assert "member4" in html and "editor4" in html
