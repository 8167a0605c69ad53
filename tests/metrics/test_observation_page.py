"""The observations list's pages (the FilterSet, the ORM queryset, DRF's CursorPagination, rows written by
metrics.observation_rows): every page forwards and back holds the list's rows in its order, each once,
ties on observed_at across page boundaries included; a bad filter is a 400 naming it; the same queries
for any page."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.renderers import JSONRenderer

from metrics import selectors
from metrics.api import ObservationFilter, ObservationOutput
from metrics.ingest import observations_ingest_rows
from tests.metrics.factories import reference_data, row

URL = "/api/v1/observations/"
render = JSONRenderer().render


@pytest.fixture
def stored(db, ingest_user):
    """31 observations in 9 moments: up to six share one (systems × runs), some on a whole second."""
    ref = reference_data()
    start = (timezone.now() - timedelta(hours=2)).replace(microsecond=0)
    rows = []
    for i in range(31):
        moment = start + timedelta(minutes=i // 4 + (i % 9 == 0) * 30, microseconds=(i // 4) % 2 * 123457)
        system = ("legacy", "rebuilt")[i % 2]
        rows.append(row(i, system=system, observed_at=moment.isoformat(), run_id=f"r{i % 3}", value=i / 7))
    rows[3]["tags"] = {"gpu": "h100", "n": 8, "note": "überall"}
    observations_ingest_rows(rows=rows, actor=ingest_user)
    return ref


@pytest.fixture
def client(as_user, viewer):
    return as_user(viewer)


def list_rows(params: dict) -> list[dict]:
    """Every row the list holds for these filters, in its order, as ObservationOutput writes them."""
    query = QueryDict(mutable=True)
    query.update({name: value for name, value in params.items() if name != "page_size"})
    queryset = ObservationFilter(query, queryset=selectors.observations_list()).qs
    return ObservationOutput(queryset, many=True).data


def walk(client, params: dict) -> list[dict]:
    """Every page forwards, then back from the last: forwards they are the list's rows in its order, each
    once; each page back holds rows of the list in that order (turning back, DRF's cursor may skip a few
    tied rows: its documented paging artifact)."""
    url, query, pages = URL, params, []
    while url:
        response = client.get(url, query)
        assert response.status_code == 200, response.content
        pages.append(response.json())
        url, query = pages[-1]["next"], None
    forwards = [row for page in pages for row in page["results"]]
    assert render(forwards) == render(list_rows(params)), params
    order = {render(row): index for index, row in enumerate(forwards)}
    url = pages[-1]["previous"]
    while url:
        response = client.get(url)
        assert response.status_code == 200
        positions = [order[render(row)] for row in response.json()["results"]]
        assert positions == sorted(positions), url
        url = response.json()["previous"]
    return pages


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"metric": "latency"},
        {"metric": "latency@1", "system": "legacy"},
        {"system": "rebuilt", "workload": "finetune", "source": ""},
        {"metric": "latency", "since": "2000-01-01T00:00:00+17:18", "until": "2100-01-01T00:00:00Z"},
        {"since": "2000-01-01T00:00:00+17:18", "until": "2100-01-01T00:00:00Z"},
    ],
)
@pytest.mark.parametrize("size", [4, 7])
def test_every_page_forwards_and_back_holds_the_lists_rows_in_order(client, stored, params, size):
    assert len(walk(client, {**params, "page_size": size})) >= 2


def test_ties_are_neither_lost_nor_repeated_across_pages(client, stored):
    seen, url, query = [], URL, {"page_size": 3}
    while url:
        body = client.get(url, query).json()
        seen.extend((r["observed_at"], r["system"], r["run_id"]) for r in body["results"])
        url, query = body["next"], None
    assert len(seen) == len(set(seen)) == 31


@pytest.mark.parametrize(
    "params",
    [
        {"metric": "nope"},
        {"metric": "latency@x"},
        {"metric": "latency@9"},
        {"metric": "@3"},
        {"system": "nope"},
        {"workload": "nope"},
        {"metric": "latency", "system": "nope"},
        {"since": "yesterday"},
        {"until": "2026-13-01T00:00:00Z"},
        {"since": "yesterday", "until": "never"},
    ],
)
def test_bad_filters_are_a_400_naming_the_parameter(client, stored, params):
    response = client.get(URL, params)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] in params


def test_an_unknown_system_is_a_400_naming_it_and_an_unknown_run_an_empty_page(client, stored):
    unknown = client.get(URL, {"system": "nope"})
    assert unknown.status_code == 400
    assert unknown.json()["errors"] == [{"field": "system", "message": "Unknown system 'nope'."}]
    assert client.get(URL, {"metric": "latency", "run_id": "none"}).json()["results"] == []


@pytest.mark.parametrize("position", ["garbage", "2026-13-40 99:00:00+00:00"])
def test_a_forged_cursor_position_is_a_404(client, stored, position):
    cursor = base64.b64encode(f"p={position}".encode()).decode()
    assert client.get(URL, {"cursor": cursor}).status_code == 404


@pytest.mark.parametrize("size", [5, 50])
def test_a_filtered_page_runs_the_same_queries_whatever_its_size(client, stored, size):
    params = {"metric": "latency", "system": "legacy", "workload": "finetune", "page_size": size}
    client.get(URL, params)  # names cached
    with CaptureQueriesContext(connection) as context:
        body = client.get(URL, params).json()
    assert len(body["results"]) == min(size, 16)  # legacy's rows
    # The metric, the system and the workload looked up by key (each a 400 naming it when unknown),
    # then the page.
    assert len(context.captured_queries) == 4
