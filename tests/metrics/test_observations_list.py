"""GET /api/v1/observations/: newest first, filtered, paged by cursor without overlaps or gaps."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from metrics.ingest import observations_ingest_rows
from tests.metrics.factories import reference_data, row

URL = "/api/v1/observations/"


@pytest.fixture
def stored(db, ingest_user):
    """Five observations; two share observed_at (one per system) to exercise ties."""
    ref = reference_data()
    at = timezone.now() - timedelta(hours=1)
    rows = [row(i, observed_at=(at - timedelta(minutes=i)).isoformat(), run_id="r1") for i in range(4)]
    rows.append(row(9, system="legacy", observed_at=at.isoformat(), run_id="r1", value=0.5))
    observations_ingest_rows(rows=rows, actor=ingest_user)
    return ref


@pytest.fixture
def client(as_user, viewer):
    return as_user(viewer)


def test_newest_first_with_the_natural_key_and_no_id(client, stored):
    body = client.get(URL, {"metric": "latency"}).json()
    results = body["results"]
    assert len(results) == 5
    assert "id" not in results[0] and "count" not in body
    moments = [r["observed_at"] for r in results]
    assert moments == sorted(moments, reverse=True)
    assert {r["metric"] for r in results} == {"latency@1"}
    assert results[0]["system"] in ("legacy", "rebuilt") and results[0]["run_id"] == "r1"


def test_filters(client, stored):
    assert len(client.get(URL, {"system": "legacy"}).json()["results"]) == 1
    assert len(client.get(URL, {"run_id": "r1", "workload": "finetune"}).json()["results"]) == 5
    assert client.get(URL, {"run_id": "nope"}).json()["results"] == []
    since = (timezone.now() - timedelta(hours=1, minutes=1, seconds=30)).isoformat()
    assert len(client.get(URL, {"since": since}).json()["results"]) == 3


def test_cursor_pages_cover_every_row_once_in_order(client, stored):
    seen, url, params = [], URL, {"metric": "latency", "page_size": 2}
    while url:
        body = client.get(url, params).json()
        assert len(body["results"]) <= 2
        seen.extend((r["observed_at"], r["system"]) for r in body["results"])
        url, params = body["next"], None
    assert len(seen) == len(set(seen)) == 5
    assert [moment for moment, _ in seen] == sorted((moment for moment, _ in seen), reverse=True)


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({"metric": "nope"}, 400, "metric"),  # a query parameter: bad input, not a missing page
        ({"metric": "latency@x"}, 400, "metric"),
        ({"since": "yesterday"}, 400, "since"),
        ({"cursor": "garbage"}, 404, None),
    ],
)
def test_bad_filters_are_clear_4xx(client, stored, params, status, field):
    response = client.get(URL, params)
    assert response.status_code == status, response.content
    if field:
        assert field in response.content.decode()


@pytest.fixture
def spread(db, ingest_user):
    """One observation an hour ago and one ten days ago, of the same run."""
    ref = reference_data()
    now = timezone.now()
    rows = [
        row(0, observed_at=(now - timedelta(hours=1)).isoformat(), run_id="spread"),
        row(1, observed_at=(now - timedelta(days=10)).isoformat(), run_id="spread"),
    ]
    observations_ingest_rows(rows=rows, actor=ingest_user)
    return ref


def test_a_list_across_every_metric_defaults_to_the_last_seven_days(client, spread):
    # No metric and no time bound: only the last 7 days (an API change, README 'The observations list').
    assert len(client.get(URL).json()["results"]) == 1
    assert len(client.get(URL, {"system": "rebuilt", "workload": "finetune"}).json()["results"]) == 1


@pytest.mark.parametrize(
    "params",
    [
        {"metric": "latency"},
        {"run_id": "spread"},
        {"since": "2000-01-01T00:00:00Z"},
        {"until": "2100-01-01T00:00:00Z"},
    ],
)
def test_a_metric_a_run_or_a_time_bound_lifts_the_default(client, spread, params):
    assert len(client.get(URL, params).json()["results"]) == 2
