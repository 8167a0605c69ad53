"""The incidents pages: constant queries, the filing form's refusals, the chart window."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from incidents.models import Incident
from tests.incidents.factories import file_incident, incidents_setup


@pytest.fixture
def refs(db):
    return incidents_setup()


def test_the_list_page_runs_a_constant_number_of_queries(refs, client, engineer):
    client.force_login(engineer)
    now = timezone.now()
    file_incident(engineer, refs, opened=now - timedelta(days=3), resolved_at=now - timedelta(days=2))
    client.get("/incidents/")  # warm the per-user caches
    with CaptureQueriesContext(connection) as few:
        assert client.get("/incidents/").status_code == 200
    for i in range(6):
        file_incident(
            engineer,
            refs,
            system="legacy",
            opened=now - timedelta(days=9 + i),
            resolved_at=now - timedelta(days=8),
        )
    with CaptureQueriesContext(connection) as more:
        response = client.get("/incidents/")
    assert response.content.count(b'data-testid="incident-row"') == 7
    assert len(more) == len(few)


def test_the_detail_page_runs_a_constant_number_of_queries(refs, client, engineer):
    client.force_login(engineer)
    incident = file_incident(engineer, refs)
    client.get(f"/incidents/{incident.pk}/")
    with CaptureQueriesContext(connection) as few:
        client.get(f"/incidents/{incident.pk}/")
    client.post(f"/incidents/{incident.pk}/checklist/", {"done_steps": ["0", "1"]})
    now = timezone.now().strftime("%Y-%m-%dT%H:%M")
    client.post(
        f"/incidents/{incident.pk}/resolve/", {"resolve-mitigated_at": now, "resolve-resolved_at": now}
    )
    with CaptureQueriesContext(connection) as more:
        response = client.get(f"/incidents/{incident.pk}/")
    assert b"resolved" in response.content
    assert len(more) == len(few)


def test_filing_out_of_order_shows_the_rule_on_the_field(refs, client, engineer):
    client.force_login(engineer)
    response = client.post(
        "/incidents/new/",
        {
            "title": "Shard loader stalls",
            "system": "rebuilt",
            "component": "nccl",
            "bug_class": "data-pipeline",
            "severity": "sev3",
            "opened_at": "2026-05-02T10:00",
            "detected_at": "2026-05-02T09:00",
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    # The page says it with the labels, in the error summary at the top of the form, linked to the field.
    summary = html[html.index('data-testid="error-summary"') :]
    summary = summary[: summary.index("</div>")]
    assert "There is a problem" in summary
    assert '<a href="#id_detected_at">Detected at: Detected at must not be before opened at.</a>' in summary
    assert html.index('data-testid="error-summary"') < html.index('name="title"')  # above the fields
    assert "detected_at must not" not in html
    assert not Incident.objects.exists()


def test_the_api_keeps_naming_fields_by_their_json_names(refs, engineer):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(engineer)
    response = api.post(
        "/api/v1/incidents/",
        {
            "title": "Shard loader stalls",
            "system": "rebuilt",
            "component": "nccl",
            "bug_class": "data-pipeline",
            "severity": "sev3",
            "opened_at": "2026-05-02T10:00:00Z",
            "detected_at": "2026-05-02T09:00:00Z",
        },
        format="json",
    )
    assert response.status_code == 400, response.content
    assert "detected_at must not be before opened_at." in response.content.decode()


def test_filing_on_the_page_redirects_to_the_incident(refs, client, engineer):
    client.force_login(engineer)
    response = client.post(
        "/incidents/new/",
        {
            "title": "Shard loader stalls",
            "system": "rebuilt",
            "component": "nccl",
            "bug_class": "data-pipeline",
            "severity": "sev3",
            "opened_at": "2026-05-02T10:00",
            "detected_at": "2026-05-02T10:20",
            "resolved_at": "2026-05-02T14:20",
        },
    )
    incident = Incident.objects.get()
    assert response.status_code == 302 and response.url == f"/incidents/{incident.pk}/"
    assert incident.state == "resolved"


def test_the_chart_fragment_answers_an_htmx_request_with_its_window(refs, client, engineer):
    client.force_login(engineer)
    now = timezone.now()
    file_incident(engineer, refs, opened=now - timedelta(days=200), resolved_at=now - timedelta(days=199))
    file_incident(engineer, refs, opened=now - timedelta(days=5), resolved_at=now - timedelta(days=4))
    response = client.get("/incidents/", {"part": "chart", "days": "30"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section class="card" id="mttr-chart"')
    assert "in the last 30 days" in body
    assert body.count('data-testid="speed-row"') == 1
