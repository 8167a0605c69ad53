"""Break-glass overrides on the freeze page: the panel, opening one, reviewing one, refusals."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from freeze import services
from freeze.models import FreezeOverride
from tests.freeze.factories import freeze_setup
from tests.program.factories import make_lead


@pytest.fixture
def ref(db, lead, request):
    ref = freeze_setup(lead)
    if "lead2" in request.fixturenames:  # roles are per program (issue 25): the second lead leads it too
        make_lead(ref["program"], request.getfixturevalue("lead2"))
    return ref


def end_fields(when) -> dict:
    return {"ends_at_0": when.strftime("%Y-%m-%d"), "ends_at_1": when.strftime("%H:%M")}


def opened(lead, ref, component="kernels"):
    return services.override_open(
        actor=lead, component=ref[component], reason="NCCL hang", ends_at=timezone.now() + timedelta(hours=3)
    )


def test_a_lead_opens_one_from_the_panel(client, lead, ref):
    client.force_login(lead)
    page = client.get("/freeze/").content.decode()
    assert "Open break-glass override" in page and 'name="ends_at_1"' in page
    when = timezone.now() + timedelta(hours=5)
    response = client.post(
        "/freeze/overrides/new/",
        {"component": "kernels", "reason": "NCCL hang", **end_fields(when)},
        follow=True,
    )
    override = FreezeOverride.objects.get()
    assert override.ends_at.strftime("%Y-%m-%d %H:%M") == when.strftime("%Y-%m-%d %H:%M")
    text = response.content.decode()
    assert f"Override #{override.pk} opened: kernels may change until" in text
    assert f'id="override-{override.pk}-live"' in text


def test_more_than_24_hours_is_refused_on_the_form_keeping_the_input(client, lead, ref):
    client.force_login(lead)
    when = timezone.now() + timedelta(hours=30)
    response = client.post(
        "/freeze/overrides/new/", {"component": "kernels", "reason": "typed reason", **end_fields(when)}
    )
    assert response.status_code == 400
    text = response.content.decode()
    assert "lasts at most 24 hours" in text and "typed reason" in text
    assert not FreezeOverride.objects.exists()


def test_a_12_hour_time_is_refused_naming_the_format(client, lead, ref):
    client.force_login(lead)
    fields = {**end_fields(timezone.now() + timedelta(hours=2)), "ends_at_1": "6:30 PM"}
    response = client.post("/freeze/overrides/new/", {"component": "kernels", "reason": "r", **fields})
    assert response.status_code == 400
    assert "24-hour" in response.content.decode()


@pytest.mark.parametrize("role", ["viewer", "engineer", "component_owner"])
def test_others_see_the_panel_without_forms_and_a_forced_post_is_a_styled_403(
    client, request, lead, ref, role
):
    override = opened(lead, ref)
    client.force_login(request.getfixturevalue(role))
    page = client.get("/freeze/").content.decode()
    assert f'id="override-{override.pk}"' in page and "Break-glass overrides" in page
    assert "Open break-glass override" not in page and "Record review" not in page
    refused = client.post("/freeze/overrides/new/", {"component": "kernels"})
    assert refused.status_code == 403
    assert (
        "Only a lead of a program or a platform admin may open break-glass overrides."
        in refused.content.decode()
    )
    assert client.post(f"/freeze/overrides/{override.pk}/review/", {}).status_code == 403


def test_the_opener_sees_no_review_form_and_may_not_force_one(client, lead, ref):
    override = opened(lead, ref)
    client.force_login(lead)
    page = client.get("/freeze/").content.decode()
    assert "You opened it: another program lead reviews it." in page
    assert f"Record review of #{override.pk}" not in page
    refused = client.post(f"/freeze/overrides/{override.pk}/review/", {"review_note": "self"})
    assert refused.status_code == 403 and "another program lead reviews it" in refused.content.decode()


def test_another_lead_reviews_from_the_panel(client, lead, lead2, ref):
    override = opened(lead, ref)
    client.force_login(lead2)
    assert f"Record review of #{override.pk}" in client.get("/freeze/").content.decode()
    empty = client.post(f"/freeze/overrides/{override.pk}/review/", {"review_note": ""})
    assert empty.status_code == 400 and "This field is required." in empty.content.decode()
    done = client.post(f"/freeze/overrides/{override.pk}/review/", {"review_note": "Was right."}, follow=True)
    assert f"Review of override #{override.pk} recorded." in done.content.decode()
    override.refresh_from_db()
    assert (override.review_note, override.reviewed_by) == ("Was right.", lead2)
    assert "Nothing awaits review." in done.content.decode()


def test_an_overdue_review_is_flagged(client, viewer, lead, ref):
    override = opened(lead, ref)
    FreezeOverride.objects.filter(pk=override.pk).update(starts_at=timezone.now() - timedelta(hours=73))
    client.force_login(viewer)
    assert "review overdue" in client.get("/freeze/").content.decode()


def test_the_freeze_page_with_the_panel_runs_constant_queries(client, lead, lead2, ref):
    client.force_login(lead2)

    def count():
        client.get("/freeze/")
        with CaptureQueriesContext(connection) as context:
            assert client.get("/freeze/").status_code == 200
        return len(context.captured_queries)

    opened(lead, ref)
    small = count()
    for key in ("trainer", "dashboards", "kernels", "trainer"):
        opened(lead, ref, key)
    assert count() == small
