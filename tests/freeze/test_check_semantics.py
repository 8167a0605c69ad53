"""The freeze check's rules, one test each (issue 12 §1), through the API and the command."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from freeze import services
from freeze.models import FreezeOverride, FreezeWindow
from tests.freeze.factories import freeze_setup, submitted_exception
from tests.program.factories import make_program

CHECK = "/api/v1/freeze/check/"


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


def window(program, name, level, now, since=timedelta(hours=2), **levels):
    made = FreezeWindow.objects.create(
        program=program,
        name=name,
        starts_at=now - since,
        ends_at=now + timedelta(days=3),
        default_level=level,
    )
    for key, value in levels.items():
        made.entries.create(component_id=key, level=value)
    return made


def check(client, component, **params):
    response = client.get(CHECK, {"component": component, **params})
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def other_program(lead, ref):
    return make_program(lead, slug="second")


def approved_exception(engineer, approver, ref, component="trainer", **changes):
    exception = submitted_exception(engineer, ref[component], ref["now"], **changes)
    return services.exception_approve(actor=approver, exception=exception)


def test_every_program_s_windows_count_by_default(as_user, viewer, ref, other_program):
    window(other_program, "Second program freeze", "frozen", ref["now"])
    body = check(as_user(viewer), "dashboards")
    assert body["decision"] == "forbidden"
    assert {w["program"] for w in body["windows"]} == {"rebuild", "second"}
    assert body["program"] is None


def test_one_program_s_window_does_not_block_another_program_s_ci(as_user, viewer, ref, other_program):
    """The bug: the demo program's window made nccl forbidden for a second program."""
    window(ref["program"], "Demo cutover", "frozen", ref["now"])
    client = as_user(viewer)
    assert check(client, "dashboards")["decision"] == "forbidden"
    body = check(client, "dashboards", program="second")
    assert (body["decision"], body["windows"], body["program"]) == ("allowed", [], "second")
    assert body["reason"] == "No freeze window is in force for second."


def test_an_unknown_program_is_a_400_naming_program(as_user, viewer, ref):
    response = as_user(viewer).get(CHECK, {"component": "trainer", "program": "nope"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "program"


def test_the_strictest_level_wins_and_every_window_is_listed(as_user, viewer, ref, other_program):
    window(other_program, "Open window", "open", ref["now"])
    hard = window(other_program, "Hard freeze", "frozen", ref["now"])
    body = check(as_user(viewer), "trainer")
    assert (body["decision"], body["level"], body["window"]["name"]) == ("forbidden", "frozen", "Hard freeze")
    levels = {w["name"]: (w["level"], w["deciding"]) for w in body["windows"]}
    assert levels == {
        "Wave 2": ("approval", False),
        "Open window": ("open", False),
        "Hard freeze": ("frozen", True),
    }
    assert body["window"]["id"] == hard.pk


def test_approval_beats_open(as_user, viewer, ref, other_program):
    window(other_program, "Open window", "open", ref["now"])
    body = check(as_user(viewer), "dashboards")  # open in Wave 2 explicitly, open in the other
    assert body["decision"] == "allowed"
    window(other_program, "Approval window", "approval", ref["now"])
    assert check(as_user(viewer), "dashboards")["decision"] == "needs_approval"


def test_an_approved_exception_lifts_approval_in_every_window(
    as_user, viewer, engineer, component_owner, ref, other_program
):
    """The bug: inside the exception's change window the check still said needs_approval, naming the
    other window at approval."""
    exception = approved_exception(engineer, component_owner, ref)
    # Earlier than the exception's own window (Wave 2), so it is the one a tie names.
    window(other_program, "Second program approval", "approval", ref["now"], since=timedelta(days=2))
    at = (ref["now"] + timedelta(minutes=90)).isoformat()
    body = check(as_user(viewer), "trainer", at=at)
    assert body["window"]["name"] == "Second program approval"
    assert body["decision"] == "allowed"
    assert body["exception"]["id"] == exception.pk
    assert len([w for w in body["windows"] if w["level"] == "approval"]) == 2
    # Still so when asking about the other program only: the exception belongs to the component.
    assert check(as_user(viewer), "trainer", at=at, program="second")["exception"]["id"] == exception.pk


def test_an_exception_counts_only_inside_its_change_window(as_user, viewer, engineer, component_owner, ref):
    approved_exception(engineer, component_owner, ref)
    before = (ref["now"] + timedelta(minutes=30)).isoformat()
    body = check(as_user(viewer), "trainer", at=before)
    assert (body["decision"], body["exception"]) == ("needs_approval", None)


def test_frozen_is_never_lifted_by_an_exception(
    as_user, viewer, engineer, component_owner, ref, other_program
):
    approved_exception(engineer, component_owner, ref)
    window(other_program, "Hard freeze", "frozen", ref["now"])
    body = check(as_user(viewer), "trainer", at=(ref["now"] + timedelta(minutes=90)).isoformat())
    assert (body["decision"], body["exception"]) == ("forbidden", None)
    assert "no exception lifts a freeze" in body["reason"]


def test_an_override_allows_even_a_frozen_component_and_is_named(as_user, viewer, lead, ref):
    override = services.override_open(
        actor=lead, component=ref["kernels"], reason="NCCL hang", ends_at=ref["now"] + timedelta(hours=3)
    )
    body = check(as_user(viewer), "kernels")
    assert (body["decision"], body["level"]) == ("allowed", "frozen")
    assert body["override"]["id"] == override.pk
    assert body["override"]["opened_by"] == "lead"
    after = (ref["now"] + timedelta(hours=4)).isoformat()
    later = check(as_user(viewer), "kernels", at=after)
    assert (later["decision"], later["override"]) == ("forbidden", None)


def test_the_check_runs_a_constant_number_of_queries(as_user, viewer, ref, other_program):
    client = as_user(viewer)

    def count():
        check(client, "trainer")
        with CaptureQueriesContext(connection) as context:
            check(client, "trainer")
        return len(context.captured_queries)

    window(other_program, "one", "approval", ref["now"])
    small = count()
    for i in range(6):
        window(other_program, f"more {i}", "approval", ref["now"], **{str(ref["trainer"].pk): "approval"})
    assert count() == small


def run(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("freeze_check", *args, stdout=out, stderr=err)
    return exit_info.value.code, out.getvalue(), err.getvalue()


def test_command_lists_windows_exception_and_override(lead, engineer, component_owner, ref, other_program):
    window(other_program, "Second program approval", "approval", ref["now"])
    exception = approved_exception(engineer, component_owner, ref)
    at = (ref["now"] + timedelta(minutes=90)).isoformat()
    code, out, _ = run("trainer", "--at", at)
    assert code == 0
    assert "windows in force (all programs):" in out
    assert "Wave 2 [rebuild]" in out and "Second program approval [second]" in out
    assert f"exception: #{exception.pk}" in out
    assert "override: none" in out
    override = services.override_open(
        actor=lead, component=ref["kernels"], reason="hotfix", ends_at=ref["now"] + timedelta(hours=2)
    )
    code, out, _ = run("kernels")
    assert code == 0
    assert f"override: #{override.pk} by lead" in out and "(review awaiting): hotfix" in out
    assert "frozen <- decides" in out


def test_command_program_option(ref, other_program):
    window(ref["program"], "Demo cutover", "frozen", ref["now"])
    assert run("dashboards")[0] == 1
    code, out, _ = run("dashboards", "--program", "second")
    assert code == 0 and "windows in force (program second): none" in out
    code, _, err = run("dashboards", "--program", "ghost")
    assert code == 2 and "--program: Unknown program 'ghost'." in err


def test_override_rows_never_outlive_24_hours(lead, ref):
    """The database keeps the end after the start; the service keeps it within 24 h (tested in
    test_overrides); here: a stored override is in force only inside its span."""
    override = services.override_open(
        actor=lead, component=ref["trainer"], reason="r", ends_at=ref["now"] + timedelta(hours=1)
    )
    assert FreezeOverride.objects.get(pk=override.pk).in_force(ref["now"] + timedelta(minutes=30))
    assert not override.in_force(ref["now"] + timedelta(hours=2))
