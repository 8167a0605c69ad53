"""GET /api/v1/observations/export/: the list's filters, every row in one streamed CSV, bounded, in the
definition's unit, read back by the tracker's own CSV import (issue 30, item 6)."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.db import connection
from django.http import StreamingHttpResponse
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from metrics.api import ObservationOutput
from metrics.api import observations as observations_api
from metrics.ingest import observations_ingest_rows
from metrics.models import Observation
from tests.conftest import api_token
from tests.metrics.factories import definition, reference_data, row

EXPORT = "/api/v1/observations/export/"
LIST = "/api/v1/observations/"
# The columns the tracker's CSV import reads; the others (arrival_*, batch) it ignores.
IMPORTED = ("metric", "system", "workload", "value", "unit", "observed_at", "run_id", "source", "tags")


@pytest.fixture
def stored(db, ingest_user):
    """Six observations of latency (s) sent in ms, min and s, with text that CSV must quote, tags, and
    one of another metric; all in the last day."""
    ref = reference_data()
    definition(key="throughput", unit="token/s", direction="higher_is_better")
    at = timezone.now() - timedelta(hours=2)
    rows = [
        row(0, value=867.0, unit="ms", observed_at=at.isoformat(), source='ci, "nightly"'),
        row(1, value=1.36835, unit="min", observed_at=(at - timedelta(minutes=1)).isoformat()),
        row(2, value=0.25, observed_at=(at - timedelta(minutes=2)).isoformat(), tags={"host": "a,b", "n": 3}),
        row(3, system="legacy", value=0.5, observed_at=(at - timedelta(minutes=3)).isoformat()),
        row(4, workload="pretrain", observed_at=(at - timedelta(minutes=4)).isoformat(), run_id="r\nx"),
        row(5, metric="throughput", value=2.5, unit="token/ms", observed_at=at.isoformat()),
    ]
    observations_ingest_rows(rows=rows, actor=ingest_user)
    return ref


@pytest.fixture
def client(as_user, viewer):
    return as_user(viewer)


def body_of(response) -> str:
    assert response.status_code == 200, response.content
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content).decode()


def parsed(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def all_pages(client, params: dict) -> list[dict]:
    rows, url, query = [], LIST, {**params, "page_size": 1000}
    while url:
        page = client.get(url, query).json()
        rows += page["results"]
        url, query = page["next"], None
    return rows


def as_text(rows: list[dict]) -> list[dict]:
    """JSON rows as their CSV cells read back: the comparison of an export with the list."""
    out = []
    for one in rows:
        cells = {}
        for key, value in one.items():
            if value is None:
                cells[key] = ""
            elif isinstance(value, dict | list):
                cells[key] = json.dumps(value, separators=(",", ":"))
            else:
                cells[key] = str(value)
        out.append(cells)
    return out


def test_the_export_is_a_streamed_csv_with_a_header_unit_column_utc_times_and_a_dated_name(client, stored):
    response = client.get(EXPORT, {"metric": "latency", "since": "2026-01-01T00:00:00Z"})
    text = body_of(response)

    assert response["Content-Type"] == "text/csv; charset=utf-8"
    today = f"{timezone.now():%Y-%m-%d}"
    assert response["Content-Disposition"] == (
        f'attachment; filename="observations_latency_2026-01-01_{today}.csv"'
    )
    assert text.splitlines()[0] == ",".join(ObservationOutput.Meta.fields)
    rows = parsed(text)
    assert len(rows) == 5 and {r["unit"] for r in rows} == {"s"}
    assert sorted(float(r["value"]) for r in rows) == pytest.approx([0.25, 0.25, 0.5, 0.867, 82.101])
    assert all(r["observed_at"].endswith("Z") for r in rows)
    ms = next(r for r in rows if r["arrival_unit"] == "ms")
    assert float(ms["arrival_value"]) == pytest.approx(867.0) and ms["source"] == 'ci, "nightly"'


@pytest.mark.parametrize(
    "params",
    [
        {"metric": "latency"},
        {"metric": "latency", "system": "legacy"},
        {"workload": "pretrain"},
        {},  # every metric: the last 7 days, ordered on the UTC time as the list is
        {"run_id": "r\nx"},
        {"since": (timezone.now() - timedelta(hours=2, minutes=2, seconds=30)).isoformat()},
    ],
)
def test_the_export_holds_exactly_the_lists_rows_in_the_lists_order(client, stored, params):
    exported = parsed(body_of(client.get(EXPORT, params)))

    assert exported == as_text(all_pages(client, params))
    assert exported  # every case selects something: an empty export would prove nothing


def test_without_a_bound_the_export_reads_the_lists_last_seven_days(client, stored, ingest_user):
    old = (timezone.now() - timedelta(days=10)).isoformat()
    observations_ingest_rows(rows=[row(9, observed_at=old, run_id="old")], actor=ingest_user)

    rows = parsed(body_of(client.get(EXPORT)))
    assert "old" not in {r["run_id"] for r in rows} and len(rows) == 6
    assert "old" in {r["run_id"] for r in parsed(body_of(client.get(EXPORT, {"metric": "latency"})))}
    name = client.get(EXPORT)["Content-Disposition"]
    assert f"observations_all_{timezone.now() - timedelta(days=7):%Y-%m-%d}_" in name


def test_the_export_round_trips_through_the_csv_import(client, stored, as_user, ingest_user):
    """Exported, the stored rows removed, the file posted to the CSV batch import: the same rows again."""
    text = body_of(client.get(EXPORT, {"since": "2026-01-01T00:00:00Z"}))
    before = [{k: r[k] for k in IMPORTED} for r in parsed(text)]
    Observation.objects.all().delete()

    pushed = as_user(ingest_user).post(
        "/api/v1/observations/batch/", data=text.encode(), content_type="text/csv"
    )
    assert pushed.status_code == 201, pushed.content
    assert pushed.json()["inserted"] == 6

    again = parsed(body_of(client.get(EXPORT, {"since": "2026-01-01T00:00:00Z"})))
    assert [{k: r[k] for k in IMPORTED} for r in again] == before
    assert {"host": "a,b", "n": 3} in [json.loads(r["tags"]) for r in again]


def test_the_import_command_reads_an_export_back(client, stored, tmp_path):
    from django.core.management import call_command

    path = tmp_path / "export.csv"
    path.write_text(body_of(client.get(EXPORT, {"metric": "latency"})))
    Observation.objects.all().delete()
    out = io.StringIO()
    call_command("import_observations", str(path), stdout=out, verbosity=0)
    assert "5 new, 0 already present" in out.getvalue()


def test_a_large_export_is_right_row_for_row_with_the_queries_of_a_small_one(
    client, db, ingest_user, monkeypatch
):
    reference_data()
    start = timezone.now() - timedelta(days=1)
    sent = [
        row(i, value=i / 8, observed_at=(start + timedelta(seconds=i)).isoformat(), run_id=f"r{i % 7}")
        for i in range(6000)
    ]
    observations_ingest_rows(rows=sent, actor=ingest_user)
    monkeypatch.setattr(observations_api, "EXPORT_CHUNK", 500)  # twelve chunks, twelve fetches

    def export(params: dict) -> tuple[list[dict], int]:
        with CaptureQueriesContext(connection) as queries:
            rows = parsed(body_of(client.get(EXPORT, params)))
        # The rows come through one server-side cursor (fetched 500 at a time, not one query a chunk).
        assert sum(q["sql"].startswith("DECLARE") for q in queries) == 1
        return rows, len(queries)

    export({"metric": "latency", "run_id": "r0"})  # warm the names cache
    small, small_queries = export({"metric": "latency", "until": (start + timedelta(seconds=10)).isoformat()})
    large, large_queries = export({"metric": "latency"})

    assert len(small) == 10 and len(large) == 6000
    assert large_queries == small_queries <= 6, (small_queries, large_queries)
    expected = sorted(sent, key=lambda r: r["observed_at"], reverse=True)
    assert [(float(r["value"]), r["run_id"]) for r in large] == [(r["value"], r["run_id"]) for r in expected]


def test_more_rows_than_the_export_limit_is_a_400_naming_since(client, stored, settings):
    settings.OBSERVATION_EXPORT_MAX_ROWS = 4

    response = client.get(EXPORT, {"metric": "latency"})

    assert response.status_code == 400
    body = response.json()
    assert body["errors"][0]["field"] == "since" and "more than 4 observations" in body["detail"]
    assert client.get(EXPORT, {"metric": "latency", "system": "legacy"}).status_code == 200


@pytest.mark.parametrize(
    ("params", "field"),
    [({"metric": "nope"}, "metric"), ({"system": "nope"}, "system"), ({"since": "yesterday"}, "since")],
)
def test_a_bad_filter_is_the_lists_400_naming_it(client, stored, params, field):
    response = client.get(EXPORT, params)

    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert field in response.content.decode()
    assert client.get(LIST, params).status_code == 400


def test_any_signed_in_reader_with_a_read_token_exports_and_nobody_else(api, stored, viewer, ingest_user):
    assert api.get(EXPORT).status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token(viewer, 'read')}")
    assert api.get(EXPORT, {"metric": "latency"}).status_code == 200
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token(ingest_user, 'ingest')}")
    refused = api.get(EXPORT, {"metric": "latency"})
    assert refused.status_code == 403 and "`read` scope" in refused.json()["detail"]


@pytest.mark.parametrize("asked", [{"HTTP_ACCEPT": "text/csv"}, {"format": "csv"}, {"HTTP_ACCEPT": "*/*"}])
def test_the_export_answers_csv_however_it_is_asked_for(client, stored, asked):
    headers = {k: v for k, v in asked.items() if k.startswith("HTTP_")}
    params = {"metric": "latency", **{k: v for k, v in asked.items() if not k.startswith("HTTP_")}}

    assert len(parsed(body_of(client.get(EXPORT, params, **headers)))) == 5
