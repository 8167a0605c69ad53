"""POST /api/v1/freeze/windows/: leads create windows; bad input is a 4xx naming the field."""

from datetime import timedelta

import pytest
from django.utils import timezone

from freeze.models import FreezeWindow
from tests.freeze.factories import freeze_setup

URL = "/api/v1/freeze/windows/"


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


def payload(ref, **changes) -> dict:
    now = timezone.now()
    return {
        "program": ref["program"].slug,
        "name": "Final freeze",
        "starts_at": (now + timedelta(days=20)).isoformat(),
        "ends_at": (now + timedelta(days=40)).isoformat(),
        "default_level": "frozen",
        **changes,
    }


def test_a_lead_creates_a_window(as_user, lead, ref):
    response = as_user(lead).post(URL, payload(ref), format="json")
    assert response.status_code == 201, response.json()
    assert FreezeWindow.objects.get(pk=response.json()["id"]).default_level == "frozen"


def test_only_leads_create_windows(as_user, engineer, ref):
    assert as_user(engineer).post(URL, payload(ref), format="json").status_code == 403
    assert FreezeWindow.objects.count() == 1


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"program": "nope"}, "program"),
        ({"program": "a\u0000b"}, "program"),
        ({"name": "x\u0000"}, "name"),
        ({"default_level": "sometimes"}, "default_level"),
        ({"starts_at": "soon"}, "starts_at"),
        ({"ends_at": (timezone.now() - timedelta(days=400)).isoformat()}, "ends_at"),
    ],
)
def test_bad_window_input_is_refused_naming_the_field(as_user, lead, ref, changes, field):
    response = as_user(lead).post(URL, payload(ref, **changes), format="json")
    assert response.status_code == 400, response.content
    assert field in [error["field"] for error in response.json()["errors"]]
    assert FreezeWindow.objects.count() == 1
