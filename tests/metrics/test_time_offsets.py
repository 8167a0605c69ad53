"""UTC offsets beyond PostgreSQL's ±15:59 (Python takes up to ±23:59) are converted, never a 500.

Found by schemathesis: `GET /api/v1/observations/?until=…+17:18` was a 500. Ingest already stored such
times correctly (binary COPY sends UTC); its test guards both write paths."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.utils import timezone as django_timezone

from metrics.models import Observation
from tests.metrics.factories import row

FAR_EAST = timezone(timedelta(hours=17, minutes=18))


@pytest.mark.parametrize("param", ["since", "until"])
def test_a_list_filter_with_a_far_offset_is_compared_in_utc(as_user, viewer, ref, param):
    moment = datetime(2026, 11, 29, 23, 59, 44, tzinfo=FAR_EAST).isoformat()
    response = as_user(viewer).get("/api/v1/observations/", {"metric": "latency", param: moment})
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("path", ["new run", "stored run"])
def test_an_observation_with_a_far_offset_is_stored_in_utc(as_user, ingest_user, ref, path):
    client = as_user(ingest_user)
    moment = (django_timezone.now() - timedelta(hours=2)).astimezone(FAR_EAST)
    if path == "stored run":  # the run goes on; the repeat below goes through the merge
        earlier = row(0, observed_at=(moment - timedelta(minutes=1)).isoformat(), run_id="far")
        assert (
            client.post("/api/v1/observations/batch/", {"observations": [earlier]}, format="json").status_code
            == 201
        )
    far = row(1, observed_at=moment.isoformat(), run_id="far")
    for body in ({"observations": [far]}, {"observations": [{**far, "value": str(far["value"])}]}):
        response = client.post("/api/v1/observations/batch/", body, format="json")
        assert response.status_code == 201, response.content
    assert Observation.objects.filter(observed_at=moment.astimezone(UTC)).count() == 1
