"""Every read of observations says the unit it means (issue 26, item 3): `value` in the definition's
unit with that unit, `arrival_value` and `arrival_unit` as sent — in JSON and CSV, on the one-metric
and the across-metrics list, and through the metric page's export links. Conversions checked against
pint on its own registry."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pint
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from metrics.api import ObservationOutput
from metrics.ingest import observations_ingest_rows
from metrics.models import Observation
from tests.metrics.factories import definition, reference_data, row

URL = "/api/v1/observations/"
EXPORT = "/api/v1/observations/export/"
UNITS = pint.UnitRegistry()  # pint's own, not metrics.units' (which defines the countable units)
UNITS.define("token = [token]")
# What was sent: (metric, value, unit or None). latency is in seconds, throughput in token/s.
SENT = [
    ("latency", 1.36835, "min"),  # stored as 82.101 s, read back before as 82.101 "min"
    ("latency", 867.0, "ms"),  # stored as 0.867 s, read back before as 0.867 "ms"
    ("latency", 0.25, "s"),
    ("latency", 0.5, None),  # no unit: the definition's
    ("throughput", 2.5, "token/ms"),  # 2,500 token/s
]
SENT_UNITS = [unit or "s" for _, _, unit in SENT]
EXPECTED_UNIT = {"latency": "s", "throughput": "token/s"}


@pytest.fixture
def stored(db, ingest_user):
    ref = reference_data()
    definition(key="throughput", unit="token/s", direction="higher_is_better")
    at = timezone.now() - timedelta(hours=1)
    rows = []
    for i, (metric, value, unit) in enumerate(SENT):
        one = row(i, metric=metric, value=value, observed_at=(at - timedelta(minutes=i)).isoformat())
        one.pop("unit")
        rows.append(one | ({"unit": unit} if unit else {}))
    observations_ingest_rows(rows=rows, actor=ingest_user)
    return ref


def expected() -> list[dict]:
    """Newest first, as the list orders them (each row a minute older than the one before)."""
    answer = []
    for (metric, value, _), arrival_unit in zip(SENT, SENT_UNITS, strict=True):
        unit = EXPECTED_UNIT[metric]
        stored = UNITS.Quantity(value, arrival_unit).to(unit).magnitude
        answer.append(
            {
                "metric": f"{metric}@1",
                "value": stored,
                "unit": unit,
                "arrival_value": UNITS.Quantity(stored, unit).to(arrival_unit).magnitude,
                "arrival_unit": arrival_unit,
                "sent": value,
            }
        )
    return answer


def from_json(response) -> list[dict]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("application/json")
    return response.json()["results"]


def from_csv(response) -> list[dict]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/csv")
    body = b"".join(response.streaming_content) if response.streaming else response.content
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    for one in rows:
        one["value"], one["arrival_value"] = float(one["value"]), float(one["arrival_value"])
        one["tags"] = json.loads(one["tags"])
    return rows


READS = {
    "json": (lambda client, params: from_json(client.get(URL, params))),
    "csv (?format=csv)": (lambda client, params: from_csv(client.get(URL, {**params, "format": "csv"}))),
    "csv (Accept)": (lambda client, params: from_csv(client.get(URL, params, HTTP_ACCEPT="text/csv"))),
    # One download of every row the filters select (page_size is no filter: it is ignored).
    "csv (export)": (lambda client, params: from_csv(client.get(EXPORT, params))),
}
PATHS = {
    "one metric": [{"metric": "latency"}],  # observation_definition_time, ordered on observed_at
    "every metric": [{}],  # observation_utc_time, ordered on the UTC time
    "every metric, paged": [{"page_size": 2}],
}


def _check(rows: list[dict], wanted: list[dict]) -> None:
    assert [r["metric"] for r in rows] == [w["metric"] for w in wanted]
    for got, want in zip(rows, wanted, strict=True):
        assert got["unit"] == want["unit"] and got["arrival_unit"] == want["arrival_unit"]
        assert got["value"] == pytest.approx(want["value"], rel=1e-12)
        assert got["arrival_value"] == pytest.approx(want["arrival_value"], rel=1e-12)
        assert got["arrival_value"] == pytest.approx(want["sent"], rel=1e-12)


@pytest.mark.parametrize("read", READS)
@pytest.mark.parametrize("path", PATHS)
def test_every_read_says_the_definitions_unit_and_the_arrival(stored, as_user, viewer, read, path):
    client = as_user(viewer)
    (params,) = PATHS[path]
    wanted = expected() if path != "one metric" else [w for w in expected() if w["metric"] == "latency@1"]

    # Paged: every page, by the answer's own link.
    paged = "page_size" in params and read != "csv (export)"
    rows = _all_pages(client, read, params) if paged else READS[read](client, params)

    _check(rows, wanted)


def _all_pages(client, read: str, params: dict) -> list[dict]:
    """Every page, following `next` (JSON) or the `Link` header (either format: the same link)."""
    rows, url = [], URL
    query = {**params, **({"format": "csv"} if read == "csv (?format=csv)" else {})}
    headers = {"HTTP_ACCEPT": "text/csv"} if read == "csv (Accept)" else {}
    while url:
        response = client.get(url, query, **headers)
        rows += from_json(response) if read == "json" else from_csv(response)
        link = response.get("Link")
        url = link.split(">")[0].lstrip("<") if link else None
        query = None
    return rows


def test_the_serializer_schema_writes_the_same_units(stored):
    """ObservationOutput is the schema of what metrics.observation_rows writes: the same fields."""
    instances = list(Observation.objects.select_related("definition").order_by("-observed_at"))

    _check([dict(d) for d in ObservationOutput(instances, many=True).data], expected())


def test_an_empty_csv_page_still_names_its_columns(stored, as_user, viewer):
    response = as_user(viewer).get(URL, {"run_id": "nope", "format": "csv"})

    assert response.content.decode().splitlines() == [",".join(ObservationOutput.Meta.fields)]
    assert response["Content-Disposition"] == 'attachment; filename="observations.csv"'


def test_a_bad_filter_in_csv_is_a_400_naming_it(stored, as_user, viewer):
    response = as_user(viewer).get(URL, {"metric": "nope", "format": "csv"})

    assert response.status_code == 400
    (error,) = csv.DictReader(io.StringIO(response.content.decode()))
    assert error["field"] == "metric" and "nope" in error["detail"]


def test_csv_and_json_run_the_same_queries_for_any_page(stored, as_user, viewer):
    client = as_user(viewer)
    counts = []
    for params in ({"page_size": 1}, {"page_size": 5}, {"page_size": 5, "format": "csv"}):
        client.get(URL, params)  # warm the names cache
        with CaptureQueriesContext(connection) as queries:
            assert client.get(URL, params).status_code == 200
        counts.append(len(queries))
    assert len(set(counts)) == 1, counts


def test_the_metric_page_links_its_observations_as_a_csv_download_and_json(stored, client, viewer):
    client.force_login(viewer)
    page = client.get("/metrics/latency/").content.decode()

    link = f"{EXPORT}?metric=latency@1"
    assert f'href="{link}" download' in page and "Download CSV" in page
    assert f'{URL}?metric=latency@1"' in page
    rows = from_csv(client.get(link))
    _check(rows, [w for w in expected() if w["metric"] == "latency@1"])
