"""Freeze pages through the Django client: editing, levels, refusals shown on the form."""

from __future__ import annotations

from datetime import timedelta, timezone

import pytest

from freeze import services
from freeze.models import FreezeEntry, FreezeException
from tests.freeze.factories import freeze_setup, submitted_exception


@pytest.fixture
def approved(db, lead, engineer, component_owner):
    ref = freeze_setup(lead)
    exception = submitted_exception(engineer, ref["trainer"], ref["now"])
    services.exception_approve(actor=component_owner, exception=exception)
    return exception


def form_data(exception, **changes):
    data = {
        "title": exception.title,
        "change": exception.change,
        "justification": exception.justification,
        "risk": exception.risk,
        "rollback_plan": exception.rollback_plan,
        "change_starts_at": exception.change_starts_at.strftime("%Y-%m-%dT%H:%M"),
        "change_ends_at": exception.change_ends_at.strftime("%Y-%m-%dT%H:%M"),
    }
    data.update(changes)
    return data


def test_material_edit_on_the_page_sends_it_back_for_approval(client, engineer, approved):
    client.force_login(engineer)
    response = client.post(f"/freeze/exceptions/{approved.pk}/edit/", form_data(approved, change="c2"))
    assert response.status_code == 302
    assert FreezeException.objects.get(pk=approved.pk).status == "submitted"


def test_edit_refusal_is_shown_on_the_field(client, engineer, approved):
    client.force_login(engineer)
    bad = form_data(
        approved, change_ends_at=(approved.change_starts_at - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    )
    response = client.post(f"/freeze/exceptions/{approved.pk}/edit/", bad)
    assert response.status_code == 400
    # The field's human name, never the raw one (issue 12).
    assert "The change end must be after the change start." in response.content.decode()
    assert "change_ends_at must" not in response.content.decode()
    assert FreezeException.objects.get(pk=approved.pk).status == "approved"


def test_lead_edits_all_levels_on_one_page(client, lead, approved):
    client.force_login(lead)
    window = approved.window
    page = client.get(f"/freeze/windows/{window.pk}/levels/")
    assert page.status_code == 200
    response = client.post(
        f"/freeze/windows/{window.pk}/levels/",
        {"trainer": "frozen", "kernels": "approval", "dashboards": "open", "reason": "incident"},
    )
    assert response.status_code == 302
    assert FreezeEntry.objects.get(component__key="trainer").level == "frozen"


def test_non_lead_cannot_save_levels(client, engineer, approved):
    client.force_login(engineer)
    window = approved.window
    assert client.get(f"/freeze/windows/{window.pk}/levels/").status_code == 403
    response = client.post(
        f"/freeze/windows/{window.pk}/levels/", {"trainer": "open", "kernels": "open", "dashboards": "open"}
    )
    assert response.status_code == 403
    assert not FreezeEntry.objects.filter(component__key="trainer").exists()


def test_reject_without_reason_shows_the_error(client, engineer, lead, db):
    ref = freeze_setup(lead)
    exception = submitted_exception(engineer, ref["trainer"], ref["now"])
    client.force_login(lead)
    response = client.post(f"/freeze/exceptions/{exception.pk}/reject/", {"comment": ""})
    assert "Say why." in response.content.decode()
    assert FreezeException.objects.get(pk=exception.pk).status == "submitted"


def test_levels_import_from_the_page(client, lead, approved):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(lead)
    window = approved.window
    upload = SimpleUploadedFile("levels.csv", b"component,level\ntrainer,frozen\n")
    response = client.post(f"/freeze/windows/{window.pk}/levels/import/", {"file": upload})
    assert response.status_code == 302
    assert FreezeEntry.objects.get(component__key="trainer").level == "frozen"


@pytest.mark.parametrize(
    ("who", "action", "needed"),
    [
        (
            "viewer",
            "approve",
            "Only members of training-platform, leads of program &#x27;rebuild&#x27; or a platform admin may decide",
        ),
        ("engineer", "approve", "You requested or edited this exception"),
        (
            "viewer",
            "reject",
            "Only members of training-platform, leads of program &#x27;rebuild&#x27; or a platform admin may decide",
        ),
        ("component_owner", "withdraw", "Only the requester withdraws"),
        (
            "component_owner",
            "revoke",
            "Only a lead of program &#x27;rebuild&#x27; or a platform admin may revoke exceptions.",
        ),
        ("viewer", "submit", "Only the requester submits"),
    ],
)
def test_forced_action_by_someone_who_may_not_act_is_a_403_page(
    request, client, approved, who, action, needed
):
    exception = (
        approved
        if action == "revoke"
        else submitted_exception(
            approved.requester, approved.component, approved.change_starts_at - timedelta(hours=1)
        )
    )
    before = FreezeException.objects.get(pk=exception.pk).status
    client.force_login(request.getfixturevalue(who))
    response = client.post(f"/freeze/exceptions/{exception.pk}/{action}/", {"comment": ""})
    assert response.status_code == 403
    html = response.content.decode()
    assert needed in html and 'class="topbar"' in html  # checked before the missing comment
    assert FreezeException.objects.get(pk=exception.pk).status == before


def test_approval_that_lost_the_race_keeps_the_comment(client, lead, approved):
    # The lead's page still showed "Approve"; the component owner approved first.
    client.force_login(lead)
    response = client.post(
        f"/freeze/exceptions/{approved.pk}/approve/",
        {"comment": "LGTM, watch the loss curve"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert "is approved; approving is allowed only when it is submitted." in html
    assert "LGTM, watch the loss curve" in html


@pytest.mark.parametrize("path", ["/freeze/exceptions/new/", "edit"])
def test_exception_forms_are_not_rendered_for_a_viewer(client, viewer, approved, path):
    client.force_login(viewer)
    url = f"/freeze/exceptions/{approved.pk}/edit/" if path == "edit" else path
    response = client.get(url)
    assert response.status_code == 403
    html = response.content.decode()
    assert "Only a framework engineer may" in html and 'name="justification"' not in html
    detail = client.get(f"/freeze/exceptions/{approved.pk}/").content.decode()
    assert "/edit/" not in detail


def test_levels_editor_refuses_a_viewer_with_the_styled_page(client, viewer, approved):
    client.force_login(viewer)
    response = client.get(f"/freeze/windows/{approved.window.pk}/levels/")
    assert response.status_code == 403
    html = response.content.decode()
    assert (
        "Only a lead of program &#x27;rebuild&#x27; or a platform admin may set freeze levels." in html
        and 'class="topbar"' in html
    )


def test_levels_import_by_a_non_lead_is_refused_before_the_file_is_read(client, engineer, approved):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(engineer)
    upload = SimpleUploadedFile("levels.csv", b"component,level\ntrainer,frozen\n")
    response = client.post(f"/freeze/windows/{approved.window.pk}/levels/import/", {"file": upload})
    assert response.status_code == 403
    assert not FreezeEntry.objects.filter(component__key="trainer").exists()


def test_an_edit_with_a_utc_offset_past_postgresqls_range_is_stored_in_utc(client, engineer, approved):
    # Python takes offsets up to ±23:59, PostgreSQL only ±15:59. A guard: model fields already send UTC.
    starts = approved.change_starts_at.astimezone(timezone(timedelta(hours=17, minutes=18)))
    client.force_login(engineer)
    data = form_data(approved, change_starts_at=starts.isoformat())
    response = client.post(f"/freeze/exceptions/{approved.pk}/edit/", data)
    assert response.status_code == 302, response.content.decode()[:500]
    stored = FreezeException.objects.get(pk=approved.pk).change_starts_at
    assert stored == starts.replace(microsecond=stored.microsecond)
