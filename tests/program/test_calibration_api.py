"""GET /api/v1/criteria/{id}/calibration/ and the gate page's calibration fragment."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator

from program import services
from program.models import Criterion, Gate
from tests.program.factories import make_program, metrics_for_template, observe, spread


@pytest.fixture
def criterion(db, lead):
    ref = metrics_for_template()
    make_program(lead, start=(timezone.now() - timedelta(days=60)).date())
    observe(ref["throughput"], ref["legacy"], ref["medium"], spread(100))
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(95))
    return Criterion.objects.get(name__startswith="Throughput on the canary workload")


def url(criterion) -> str:
    return f"/api/v1/criteria/{criterion.pk}/calibration/"


def test_a_viewer_reads_a_calibration(as_user, viewer, criterion):
    response = as_user(viewer).get(url(criterion))
    assert response.status_code == 200
    body = response.json()
    assert body["criterion"] == criterion.pk and body["threshold"] == criterion.threshold
    assert body["label"] == "relative performance" and body["unavailable"] == ""
    last = body["points"][-1]
    assert last["outcome"] == "pass" and last["n_candidate"] == 60
    assert last["value"] == pytest.approx(0.95, rel=0.01) and len(last["value_ci"]) == 2
    assert body["reading"].startswith("Would have passed since")


def test_anonymous_callers_are_refused(api, criterion):
    assert api.get(url(criterion)).status_code == 401


def test_moments_can_be_named(as_user, viewer, criterion):
    before = (timezone.now() - timedelta(days=5)).isoformat()
    response = as_user(viewer).get(url(criterion), {"at": [before, timezone.now().isoformat()]})
    assert response.status_code == 200
    first, last = response.json()["points"]
    assert (first["n_candidate"], first["outcome"]) == (0, "inconclusive")  # observed 2 days ago
    assert last["n_candidate"] == 60


@pytest.mark.parametrize(
    "query",
    [{"at": "yesterday"}, {"at": [timezone.now().isoformat()] * 27}],
    ids=["not a time", "too many"],
)
def test_bad_moments_are_a_400_naming_at(as_user, viewer, criterion, query):
    response = as_user(viewer).get(url(criterion), query)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"].startswith("at")


def test_an_unknown_criterion_is_a_404(as_user, viewer, db):
    assert as_user(viewer).get("/api/v1/criteria/999999/calibration/").status_code == 404


def test_a_manual_criterion_says_why_it_has_no_points(as_user, viewer, criterion):
    manual = Criterion.objects.filter(gate=criterion.gate, kind="manual").first() or services.criterion_add(
        actor=criterion.gate.phase.program.lead, gate=criterion.gate, name="Runbook", kind="manual"
    )
    body = as_user(viewer).get(url(manual)).json()
    assert body["points"] == [] and body["reading"] == body["unavailable"] != ""


def test_the_schema_documents_it():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operation = schema["paths"]["/api/v1/criteria/{id}/calibration/"]["get"]
    assert [p["name"] for p in operation["parameters"] if p["in"] == "query"] == ["at"]
    assert "CalibrationOutput" in str(operation["responses"]["200"])


def test_the_gate_page_loads_the_calibration_only_when_opened(client, viewer, criterion):
    client.force_login(viewer)
    page = client.get(f"/programs/gates/{criterion.gate_id}/").content.decode()
    fragment_url = f"/programs/criteria/{criterion.pk}/calibration/"
    assert f'hx-get="{fragment_url}"' in page and 'hx-trigger="toggle once"' in page
    assert "calibration-chart" not in page
    fragment = client.get(fragment_url, HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200
    html = fragment.content.decode()
    assert "<svg" in html and "calibration-chart" in html and "<html" not in html
    assert "Would have passed since" in html
    standalone = client.get(fragment_url).content.decode()  # followed without JavaScript: a page
    assert "<html" in standalone and "calibration-chart" in standalone
    assert Gate.objects.filter(pk=criterion.gate_id).exists()
