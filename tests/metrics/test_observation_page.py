"""The observations list's one-statement page (metrics.api.observations_keyset) answers byte for byte what
the FilterSet, the ORM queryset, DRF's CursorPagination and ObservationOutput answer, on every page
forwards and back, ties on observed_at across page boundaries included; in one query."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from metrics import selectors
from metrics.api import NewestFirst, ObservationFilter, ObservationOutput
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


def reference_page(url: str, params: dict | None) -> bytes:
    """The page as the FilterSet, the ORM queryset, DRF's paginator and ObservationOutput write it."""
    request = Request(APIRequestFactory().get(url, params))
    queryset = ObservationFilter(request.query_params, queryset=selectors.observations_list()).qs
    paginator = NewestFirst()
    page = paginator.paginate_queryset(queryset, request)
    return render(paginator.get_paginated_response(ObservationOutput(page, many=True).data).data)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"metric": "latency"},
        {"metric": "latency@1", "system": "legacy"},
        {"system": "rebuilt", "workload": "finetune", "source": ""},
        {"metric": "latency", "since": "2000-01-01T00:00:00+17:18", "until": "2100-01-01T00:00:00Z"},
    ],
)
@pytest.mark.parametrize("size", [4, 7])
def test_every_page_forwards_and_back_is_what_the_serializer_path_writes(client, stored, params, size):
    url, query, pages = URL, {**params, "page_size": size}, 0
    last = None
    while url:
        response = client.get(url, query)
        assert response.status_code == 200
        assert response.content == reference_page(url, query), (url, query)
        body = response.json()
        last, url, query, pages = body, body["next"], None, pages + 1
    assert pages >= 2
    url = last["previous"]
    while url:
        response = client.get(url)
        assert response.content == reference_page(url, None), url
        url = response.json()["previous"]


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
def test_bad_filters_answer_as_the_filterset_does(client, stored, params):
    """`batch=` (empty, so no filter) sends the same request through the FilterSet path."""
    fast, filterset = client.get(URL, params), client.get(URL, {**params, "batch": ""})
    assert fast.status_code == 400
    assert (fast.status_code, fast.content) == (filterset.status_code, filterset.content)
    assert fast.json()["errors"][0]["field"] in params


def test_an_unknown_system_is_a_400_naming_it_and_an_unknown_run_an_empty_page(client, stored):
    unknown = client.get(URL, {"system": "nope"})
    assert unknown.status_code == 400
    assert unknown.json()["errors"] == [{"field": "system", "message": "Unknown system 'nope'."}]
    assert client.get(URL, {"metric": "latency", "run_id": "none"}).json()["results"] == []


@pytest.mark.parametrize("position", ["garbage", "2026-13-40 99:00:00+00:00"])
def test_a_forged_cursor_position_is_a_404(client, stored, position):
    cursor = base64.b64encode(f"p={position}".encode()).decode()
    assert client.get(URL, {"cursor": cursor}).status_code == 404


def test_a_filtered_page_is_one_query(client, stored):
    params = {"metric": "latency", "system": "legacy", "workload": "finetune", "page_size": 5}
    client.get(URL, params)  # names cached
    with CaptureQueriesContext(connection) as context:
        body = client.get(URL, params).json()
    assert len(body["results"]) == 5
    assert len(context.captured_queries) == 1
