"""The query API's series, labels and label values come from a constant number of queries, however many
programs and metrics there are; a range read costs a fixed number per (program, metric, workload)."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from metrics.models import System
from program import services
from tests.conftest import api_token, make_user
from tests.metrics.factories import definition
from tests.program.factories import make_program, metrics_for_template

BASE = "/api/prom/api/v1"
CALLS = [
    f"{BASE}/series?match[]=rebuild_tracker_observation",
    f'{BASE}/series?match[]=rebuild_tracker_observation{{metric="step-time", workload="vision-small"}}',
    f"{BASE}/labels",
    f"{BASE}/labels?match[]=rebuild_tracker_observation",
    f"{BASE}/label/metric/values",
    f'{BASE}/label/program/values?match[]=rebuild_tracker_observation{{metric="step-time"}}',
    f"{BASE}/label/workload/values",
]
MOST = (
    6  # the token, the user's groups (platform admin?), memberships, definitions, programs, named workloads
)


def counts(client) -> dict[str, int]:
    found = {}
    for path in CALLS:
        client.get(path)  # the token's last-used stamp is written at most once a minute: warm it
        with CaptureQueriesContext(connection) as context:
            response = client.get(path)
        assert response.status_code == 200, response.content
        assert response.json()["status"] == "success"
        found[path] = len(context.captured_queries)
    return found


def grow(lead, size: int) -> None:
    for i in range(size):
        definition(key=f"extra-{size}-{i}", unit="ms")
        baseline = System.objects.create(key=f"old-{size}-{i}", name="Old")
        candidate = System.objects.create(key=f"new-{size}-{i}", name="New")
        services.program_create(
            actor=lead,
            slug=f"p-{size}-{i}",
            name="P",
            start_date=date(2026, 1, 1),
            baseline=baseline,
            candidate=candidate,
            is_private=i % 2 == 0,
        )


@pytest.mark.parametrize("who", ["viewer", "member"])
def test_series_and_labels_take_the_same_queries_for_one_program_as_for_seven(client, db, who):
    lead = make_user("lead", "program-leads")
    metrics_for_template()
    make_program(lead)
    user = lead if who == "member" else make_user("viewer")
    headers = {"HTTP_AUTHORIZATION": f"Bearer {api_token(user, 'read')}"}
    client.defaults.update(headers)
    small = counts(client)
    grow(lead, 6)
    large = counts(client)
    assert large == small
    assert max(large.values()) <= MOST
    listed = client.get(f"{BASE}/label/program/values").json()["data"]
    # A viewer sees the public programs only; their lead sees the private ones too.
    assert len(listed) == (7 if who == "member" else 4)
