"""Typed JSON rows and every other format go through the one check and give the same answers, and the
table keyed by the natural key keeps its references safe."""

from __future__ import annotations

import json

import orjson
import pytest
from django.db.models import ProtectedError

from metrics.ingest.formats import ObservationIn, decode_rows
from metrics.models import IngestBatch, Observation
from tests.metrics.factories import row

URL = "/api/v1/observations/batch/"


@pytest.fixture
def client(as_user, ingest_user):
    return as_user(ingest_user)


def post_json(client, rows):
    return client.post(URL, {"observations": rows}, format="json")


def post_ndjson(client, rows):
    return client.post(URL, "\n".join(json.dumps(r) for r in rows), content_type="application/x-ndjson")


def sample_rows() -> list[dict]:
    return [
        row(0),
        row(1, value=180, unit="ms", source="bench-host-1"),
        row(2, system="legacy", tags={"host": "gpu-7", "rack": 3}),
        row(3, unit=None, run_id="shared"),
        row(4, run_id="shared"),
    ]


def test_well_formed_json_takes_the_typed_path_and_anything_else_the_row_path():
    good = orjson.dumps({"observations": [row(0)]})
    assert all(isinstance(r, ObservationIn) for r in decode_rows(good, "application/json"))
    for odd in ({"value": "0.25"}, {"run_id": None}, {"observed_at": "2026-11-29T10:00:00"}):
        body = orjson.dumps({"observations": [row(0, **odd)]})
        assert all(isinstance(r, dict) for r in decode_rows(body, "application/json")), odd


def test_both_paths_store_the_same_rows(client, ref):
    rows = sample_rows()
    first = post_json(client, rows)
    assert first.status_code == 201, first.json()
    assert first.json()["inserted"] == 5
    stored = list(Observation.objects.order_by("run_id").values_list("value", "unit", "tags", "source"))
    # The same rows through the row-by-row path: every one is recognised as already stored, same value.
    again = post_ndjson(client, rows)
    assert again.status_code == 201, again.json()
    assert (again.json()["inserted"], again.json()["duplicates"]) == (0, 5)
    assert (
        list(Observation.objects.order_by("run_id").values_list("value", "unit", "tags", "source")) == stored
    )
    assert Observation.objects.get(run_id="run-1").value == pytest.approx(0.18)


def test_typed_json_rows_and_plain_rows_check_into_the_same_columns(ref):
    """Several metrics, tagged and untagged rows, converted units: the rows the typed JSON decoder
    makes and the same rows as plain objects (NDJSON, CSV) come out of the one check column for column."""
    from metrics.ingest.check import Lookups, check_rows
    from tests.metrics.factories import definition

    definition(key="throughput", unit="req/s", direction="higher_is_better")
    rows = [
        row(0),
        row(1, metric="throughput", value=12.5, unit="req/s", tags={"host": "gpu-7"}),
        row(2, value=180, unit="ms", tags={}),
        row(3, metric="throughput", value=3, unit=None, system="legacy", source="bench-host-1"),
    ]
    typed = decode_rows(orjson.dumps({"observations": rows}), "application/json")
    assert all(isinstance(r, ObservationIn) for r in typed)
    typed_checked, typed_errors = check_rows(typed, Lookups())
    row_checked, errors = check_rows([json.loads(json.dumps(r)) for r in rows], Lookups())
    assert errors == typed_errors == []
    assert typed_checked.columns[:5] == row_checked.columns[:5]  # ids, value, unit
    assert typed_checked.columns[6:] == row_checked.columns[6:]  # run_id, source, tags
    assert [t.timestamp() for t in typed_checked.columns[5]] == [
        t.timestamp() for t in row_checked.columns[5]
    ]
    assert len(typed_checked) == 4


def test_json_rows_outside_the_typed_shape_are_still_accepted(client, ref):
    response = post_json(client, [row(0, value="0.5"), row(1, run_id=None, unit="")])
    assert response.status_code == 201, response.json()
    assert Observation.objects.get(run_id="run-0").value == 0.5
    assert Observation.objects.get(run_id="").unit == "s"


@pytest.mark.parametrize("post", [post_json, post_ndjson], ids=["typed", "row-by-row"])
def test_a_row_repeated_in_a_new_run_with_the_same_value_is_a_no_op(client, ref, post):
    first = row(0)
    response = post(client, [first, row(1), first])
    assert response.status_code == 201, response.json()
    assert (response.json()["inserted"], response.json()["duplicates"]) == (2, 1)
    assert Observation.objects.count() == 2


@pytest.mark.parametrize("post", [post_json, post_ndjson], ids=["typed", "row-by-row"])
def test_a_row_repeated_with_another_value_names_the_first_row(client, ref, post):
    first = row(0)
    response = post(client, [first, row(1), {**first, "value": 9.0}])
    assert response.status_code == 422
    [error] = response.json()["errors"]
    assert (error["index"], error["field"]) == (2, "value")
    assert error["message"].startswith("row 0 has the same metric")
    assert Observation.objects.count() == 0
    assert IngestBatch.objects.count() == 0


@pytest.mark.parametrize("post", [post_json, post_ndjson], ids=["typed", "row-by-row"])
def test_a_unit_longer_than_the_column_is_a_row_error(client, ref, post):
    response = post(client, [row(0), row(1, unit="millisecond" * 4)])
    assert response.status_code == 422
    assert [(e["index"], e["field"]) for e in response.json()["errors"]] == [(1, "unit")]
    assert Observation.objects.count() == 0


def test_referenced_rows_cannot_be_deleted(client, ref):
    assert post_json(client, [row(0)]).status_code == 201
    with pytest.raises(ProtectedError):
        ref["rebuilt"].delete()
    with pytest.raises(ProtectedError):
        ref["latency"].delete()
    assert Observation.objects.count() == 1


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("run_id", "a\u0000b"),
        ("source", "x\u0000"),
        ("unit", "m\u0000s"),
        ("tags", {"host": "a\u0000"}),
    ],
)
@pytest.mark.parametrize("post", [post_json, post_ndjson], ids=["typed", "row-by-row"])
def test_a_nul_character_is_a_row_error_not_a_server_error(client, ref, post, field, value):
    """PostgreSQL text and jsonb cannot hold U+0000: the row is refused before it reaches COPY."""
    response = post(client, [row(0), row(1, **{field: value})])
    assert response.status_code == 422, response.content
    assert [(e["index"], e["field"]) for e in response.json()["errors"]] == [(1, field)]
    assert Observation.objects.count() == 0


def test_tags_with_integers_beyond_64_bits_are_kept(client, ref):
    response = post_json(client, [row(0, tags={"seed": 2**70})])
    assert response.status_code == 201, response.json()
    assert Observation.objects.get().tags == {"seed": 2**70}


def test_references_of_the_wrong_type_are_row_errors(client, ref):
    bad = {**row(1), "metric": ["latency"], "system": {}, "workload": [1], "tags": [1]}
    response = post_json(client, [row(0), bad])
    assert response.status_code == 422
    fields = [(e["index"], e["field"]) for e in response.json()["errors"]]
    assert fields == [(1, "metric"), (1, "system"), (1, "workload"), (1, "tags")]


def test_non_finite_numbers_in_tags_are_a_row_error_not_silently_null(client, ref):
    good = json.dumps(row(0))
    bad = json.dumps(row(1, tags={"loss": 12345.678})).replace("12345.678", "NaN")
    response = client.post(URL, f'{{"observations": [{good}, {bad}]}}', content_type="application/json")
    assert response.status_code == 422
    assert [(e["index"], e["field"]) for e in response.json()["errors"]] == [(1, "tags")]


@pytest.mark.parametrize("post", [post_json, post_ndjson], ids=["typed", "row-by-row"])
def test_observed_at_before_1970_is_a_row_error(client, ref, post):
    response = post(client, [row(0), row(1, observed_at="0001-01-01T00:00:00+14:00")])
    assert response.status_code == 422
    assert [(e["index"], e["field"]) for e in response.json()["errors"]] == [(1, "observed_at")]
