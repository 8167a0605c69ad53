"""The observations list written without its ModelSerializer: the same JSON, the same queries for any page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.renderers import JSONRenderer

from metrics import selectors
from metrics.api import ObservationOutput
from metrics.ingest import observations_ingest_rows
from metrics.observation_rows import page_rows, rows_as_json
from tests.metrics.factories import reference_data, row

URL = "/api/v1/observations/"
render = JSONRenderer().render


@pytest.fixture
def stored(db, ingest_user):
    ref = reference_data()
    at = timezone.now() - timedelta(hours=1)
    rows = [
        row(i, system=("legacy", "rebuilt")[i % 2], observed_at=(at - timedelta(minutes=i)).isoformat(), run_id=f"r{i % 3}")
        for i in range(30)
    ]  # fmt: skip
    rows[0]["tags"] = {"gpu": "h100", "n": 8}
    observations_ingest_rows(rows=rows, actor=ingest_user)
    return ref


def test_rows_are_written_as_the_serializer_writes_them(stored):
    instances = list(selectors.observations_list()[:30])
    rows = list(page_rows(selectors.observations_list())[:30])
    assert render(rows_as_json(rows)) == render(ObservationOutput(instances, many=True).data)


@pytest.mark.parametrize("params", [{}, {"metric": "latency"}, {"system": "legacy", "run_id": "r1"}])
def test_a_page_runs_the_same_queries_whatever_its_size(as_user, viewer, stored, params):
    client = as_user(viewer)

    def count(size: int) -> int:
        with CaptureQueriesContext(connection) as context:
            body = client.get(URL, {**params, "page_size": size}).json()
        assert body["results"]
        return len(context.captured_queries)

    client.get(URL, params)  # the names are cached from here on
    small, large = count(2), count(50)
    # The page, after the metric or system looked up by key when one is given. Never a query per row.
    assert small == large <= 2


def test_an_empty_page_is_an_empty_list(as_user, viewer, stored):
    assert as_user(viewer).get(URL, {"run_id": "none"}).json()["results"] == []


def test_names_come_from_the_cache_and_a_renamed_system_is_seen_by_the_next_page(as_user, viewer, stored):
    from metrics.models import System

    client = as_user(viewer)
    client.get(URL)
    with CaptureQueriesContext(connection) as context:
        client.get(URL, {"page_size": 5})
    assert len(context.captured_queries) == 1  # the page; the names are cached
    system = System.objects.get(key="legacy")
    system.key = "legacy-cluster"
    system.save()
    systems = {r["system"] for r in client.get(URL).json()["results"]}
    assert systems == {"legacy-cluster", "rebuilt"}


def test_a_new_system_is_named_on_the_next_page(as_user, viewer, stored, ingest_user):
    from metrics.models import System

    client = as_user(viewer)
    client.get(URL)  # names cached
    System.objects.create(key="third", name="Third")
    observations_ingest_rows(rows=[row(99, system="third", run_id="r9")], actor=ingest_user)
    assert client.get(URL, {"run_id": "r9"}).json()["results"][0]["system"] == "third"
