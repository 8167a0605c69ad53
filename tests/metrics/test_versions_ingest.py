"""Shadow data: rows pushed to a draft version by naming it (key@N), beside the active version's."""

from __future__ import annotations

import pytest

from metrics.ingest import observations_ingest_rows
from metrics.models import MetricDefinition, Observation
from tests.metrics.factories import definition, row

URL = "/api/v1/observations/batch/"


@pytest.fixture
def client(as_user, ingest_user):
    return as_user(ingest_user)


@pytest.fixture
def draft(ref):
    """latency@2, a draft that stopped counting queueing; latency@1 stays active."""
    return definition(key="latency", version=2, status="draft", excludes=["queueing"])


def stored(definition: MetricDefinition) -> list[float]:
    return sorted(Observation.objects.filter(definition=definition).values_list("value", flat=True))


def test_json_rows_naming_the_draft_go_to_the_draft_and_plain_key_to_the_active(client, ref, draft):
    response = client.post(
        URL,
        {"observations": [row(0, metric="latency@2", value=0.2), row(1, metric="latency", value=0.3)]},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["definitions"] == ["latency@1", "latency@2"]
    assert stored(draft) == [0.2]
    assert stored(ref["latency"]) == [0.3]


def test_csv_rows_naming_the_draft_go_to_the_draft(client, ref, draft):
    first, second = row(0, metric="latency@2", value=0.2), row(1, value=0.3)
    header = "metric,system,workload,value,unit,observed_at,run_id\n"
    body = header + "".join(
        f"{r['metric']},{r['system']},{r['workload']},{r['value']},{r['unit']},{r['observed_at']},{r['run_id']}\n"
        for r in (first, second)
    )
    response = client.generic("POST", URL, body.encode(), content_type="text/csv")
    assert response.status_code == 201, response.json()
    assert stored(draft) == [0.2]
    assert stored(ref["latency"]) == [0.3]


def test_ndjson_rows_naming_the_draft_go_to_the_draft(client, ref, draft):
    import json

    body = "\n".join(json.dumps(r) for r in (row(0, metric="latency@2", value=0.2), row(1, value=0.3)))
    response = client.generic("POST", URL, body.encode(), content_type="application/x-ndjson")
    assert response.status_code == 201, response.json()
    assert stored(draft) == [0.2]


def test_the_same_measurement_may_go_to_both_versions(client, ref, draft):
    """The shadow period's point: one run reported under v1 and v2 is two rows, not a repeat."""
    same = row(0)
    response = client.post(URL, {"observations": [same, {**same, "metric": "latency@2"}]}, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["inserted"] == 2


def test_deprecated_version_is_a_row_error_naming_the_active_version(client, ref):
    definition(key="latency", version=2, status="deprecated")
    response = client.post(URL, {"observations": [row(0), row(1, metric="latency@2")]}, format="json")
    assert response.status_code == 422
    [error] = response.json()["errors"]
    assert (error["index"], error["field"]) == (1, "metric")
    assert error["message"] == "latency@2 is deprecated; send to 'latency' (latency@1)."
    assert Observation.objects.count() == 0


def test_a_key_with_only_a_draft_says_how_to_name_it(ingest_user, ref):
    definition(key="fresh", status="draft")
    with pytest.raises(Exception) as refused:
        observations_ingest_rows(rows=[row(0, metric="fresh")], actor=ingest_user)
    assert "name one as 'fresh@N'" in refused.value.errors[0]["message"]
    observations_ingest_rows(rows=[row(0, metric="fresh@1")], actor=ingest_user)
    assert Observation.objects.filter(definition__key="fresh").count() == 1


def test_a_draft_holding_shadow_data_keeps_its_meaning(ingest_user, metric_owner, ref, draft):
    from core.errors import ApplicationError
    from metrics.services import definition_update

    definition_update(actor=metric_owner, definition=draft, changes={"max_value": 100.0})  # no data yet
    observations_ingest_rows(rows=[row(0, metric="latency@2")], actor=ingest_user)
    with pytest.raises(ApplicationError) as refused:
        definition_update(actor=metric_owner, definition=draft, changes={"unit": "ms"})
    assert "latency@2 is a draft with data: its unit cannot change" in refused.value.message
    draft.refresh_from_db()
    assert draft.unit == "s"
    definition_update(actor=metric_owner, definition=draft, changes={"name": "Latency, no queueing"})
