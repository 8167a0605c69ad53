"""Break-glass overrides (issue 12 §2): leads only (403 before validation), at most 24 h, owners and
leads notified, reviewed by another lead with a note, overdue after 72 h."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.models import Notification, Transition
from freeze import services
from freeze.models import FreezeOverride, FreezeWindow
from tests.conftest import make_user
from tests.freeze.factories import freeze_setup
from tests.program.factories import make_lead

OVERRIDES = "/api/v1/freeze/overrides/"


@pytest.fixture
def ref(db, lead, request):
    ref = freeze_setup(lead)
    if "lead2" in request.fixturenames:  # roles are per program (issue 25): the second lead leads it too
        make_lead(ref["program"], request.getfixturevalue("lead2"))
    return ref


def payload(**changes) -> dict:
    return {
        "component": "kernels",
        "reason": "NCCL hangs every checkpoint; the fix is a kernel flag.",
        "ends_at": (timezone.now() + timedelta(hours=6)).isoformat(),
        **changes,
    }


def opened(lead, ref, hours: float = 4) -> FreezeOverride:
    return services.override_open(
        actor=lead, component=ref["kernels"], reason="hotfix", ends_at=timezone.now() + timedelta(hours=hours)
    )


@pytest.mark.parametrize("role", ["engineer", "component_owner", "viewer"])
def test_only_leads_open_and_others_get_403_before_validation(as_user, request, ref, role):
    user = request.getfixturevalue(role)
    too_long = payload(ends_at=(timezone.now() + timedelta(days=9)).isoformat(), component="ghost")
    for body in ({}, too_long, payload()):
        response = as_user(user).post(OVERRIDES, body, format="json")
        assert response.status_code == 403, response.content
    assert not FreezeOverride.objects.exists()


def test_the_service_refuses_a_non_lead_too(engineer, ref):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied):
        opened(engineer, ref)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"ends_at": (timezone.now() + timedelta(hours=25)).isoformat()}, "ends_at"),
        ({"ends_at": (timezone.now() - timedelta(minutes=1)).isoformat()}, "ends_at"),
        ({"ends_at": "tomorrow"}, "ends_at"),
        ({"reason": ""}, "reason"),
        ({"reason": "   "}, "reason"),
        ({"component": "ghost"}, "component"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(as_user, lead, ref, changes, field):
    response = as_user(lead).post(OVERRIDES, payload(**changes), format="json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == field
    assert not FreezeOverride.objects.exists()


def test_a_lead_opens_one_and_owners_and_leads_are_told(as_user, lead, lead2, component_owner, engineer, ref):
    outsider = make_user("other_team", "data-platform")
    body = payload()
    response = as_user(lead).post(OVERRIDES, body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert response.status_code == 201, response.content
    answer = response.json()
    assert (answer["component"], answer["opened_by"], answer["in_force"]) == ("kernels", "lead", True)
    assert answer["review_status"] == "awaiting"
    override = FreezeOverride.objects.get()
    assert Transition.objects.filter(object_id=override.pk, action="opened", actor=lead).exists()
    notification = Notification.objects.get(event="override.opened")
    told = set(notification.receipts.values_list("user__username", flat=True))
    assert told == {"lead2", "component_owner"}  # the owner team and the leads; not the opener
    assert outsider.username not in told and engineer.username not in told
    assert notification.link == f"/freeze/#override-{override.pk}"
    replay = as_user(lead).post(OVERRIDES, body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert replay.json()["id"] == override.pk and FreezeOverride.objects.count() == 1


def test_while_it_lasts_the_check_allows_it(as_user, viewer, lead, ref):
    override = opened(lead, ref)
    body = as_user(viewer).get("/api/v1/freeze/check/", {"component": "kernels"}).json()
    assert (body["decision"], body["override"]["id"]) == ("allowed", override.pk)


def test_another_lead_reviews_with_a_note(as_user, lead, lead2, engineer, ref):
    override = opened(lead, ref)
    url = f"{OVERRIDES}{override.pk}/review/"
    assert as_user(lead).post(url, {"review_note": "fine"}, format="json").status_code == 403
    assert as_user(engineer).post(url, {}, format="json").status_code == 403
    missing = as_user(lead2).post(url, {"review_note": ""}, format="json")
    assert missing.status_code == 400 and missing.json()["errors"][0]["field"] == "review_note"
    done = as_user(lead2).post(url, {"review_note": "Flag was right; revert after the run."}, format="json")
    assert done.status_code == 200, done.content
    assert (done.json()["review_status"], done.json()["reviewed_by"]) == ("reviewed", "lead2")
    assert Transition.objects.filter(object_id=override.pk, action="reviewed", actor=lead2).exists()
    told = Notification.objects.get(event="override.reviewed").receipts.values_list(
        "user__username", flat=True
    )
    assert list(told) == ["lead"]
    again = as_user(lead2).post(url, {"review_note": "twice"}, format="json")
    assert again.status_code == 409
    assert as_user(lead2).post(f"{OVERRIDES}999999/review/", {}, format="json").status_code == 404


def test_unreviewed_after_72_hours_is_overdue_and_listed(as_user, viewer, lead, lead2, ref):
    old = opened(lead, ref)
    FreezeOverride.objects.filter(pk=old.pk).update(
        starts_at=timezone.now() - timedelta(hours=73), ends_at=timezone.now() - timedelta(hours=70)
    )
    fresh = opened(lead, ref)
    reviewed = services.override_review(actor=lead2, override=opened(lead, ref), note="ok")
    client = as_user(viewer)
    rows = client.get(OVERRIDES, {"awaiting_review": "true"}).json()["results"]
    assert {r["id"]: r["review_status"] for r in rows} == {old.pk: "overdue", fresh.pk: "awaiting"}
    in_force = {r["id"] for r in client.get(OVERRIDES, {"in_force": "true"}).json()["results"]}
    assert in_force == {fresh.pk, reviewed.pk}


def test_the_list_runs_a_constant_number_of_queries(as_user, viewer, lead, lead2, ref):
    client = as_user(viewer)

    def count():
        with CaptureQueriesContext(connection) as context:
            assert client.get(OVERRIDES).status_code == 200
        return len(context.captured_queries)

    services.override_review(actor=lead2, override=opened(lead, ref), note="ok")
    small = count()
    for _ in range(5):
        services.override_review(actor=lead2, override=opened(lead, ref), note="ok")
        opened(lead, ref)
    assert count() == small


def test_the_list_filters_by_component_and_names_a_bad_one(as_user, viewer, lead, ref):
    override = opened(lead, ref)
    client = as_user(viewer)
    assert [r["id"] for r in client.get(OVERRIDES, {"component": "kernels"}).json()["results"]] == [
        override.pk
    ]
    assert client.get(OVERRIDES, {"component": "trainer"}).json()["results"] == []
    bad = client.get(f"{OVERRIDES}?component=%00")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "component"
    unknown = client.get(OVERRIDES, {"component": "no-such"})
    assert unknown.status_code == 400 and unknown.json()["errors"][0]["field"] == "component"


def test_overdue_reviews_are_flagged_to_the_leads_once(lead, lead2, ref):
    from freeze.tasks import overrides_warn_overdue

    old, fresh = opened(lead, ref), opened(lead, ref)
    reviewed = opened(lead, ref)
    services.override_review(actor=lead2, override=reviewed, note="ok")
    past = timezone.now() - timedelta(hours=73)
    FreezeOverride.objects.filter(pk__in=[old.pk, reviewed.pk]).update(starts_at=past)
    # They lifted this program's freeze: its window was in force when they opened (issue 25's routing).
    FreezeWindow.objects.filter(pk=ref["window"].pk).update(starts_at=past - timedelta(days=1))
    assert overrides_warn_overdue() == [old.pk]
    assert overrides_warn_overdue() == []
    notification = Notification.objects.get(event="override.overdue")
    assert set(notification.receipts.values_list("user__username", flat=True)) == {"lead", "lead2"}
    assert Transition.objects.filter(object_id=old.pk, action="overdue").count() == 1
    assert fresh.pk not in FreezeOverride.objects.filter(overdue_warned_at__isnull=False).values_list(
        "pk", flat=True
    )
