"""Ingest refuses what it cannot or should not store — deep nesting, lone surrogates, values outside a
definition's bounds or not written as numbers, oversized tags — with a 4xx naming the row and field,
never a 500, and writes nothing, whatever format the rows came in."""

from __future__ import annotations

import json

import pytest

from core.models import Transition
from metrics.ingest.rules import (
    MAX_TAG_BYTES,
    MAX_TAG_DEPTH,
    MAX_TAG_ITEMS,
    MAX_TAG_KEY_LENGTH,
    MAX_TAG_TEXT_LENGTH,
)
from metrics.models import IngestBatch, MetricDefinition, Observation
from tests.metrics.factories import definition, definition_body, row

URL = "/api/v1/observations/batch/"
DEFINITIONS = "/api/v1/definitions/"
LONE = "\ud800"  # a high surrogate with no low one after it: not Unicode


@pytest.fixture
def client(as_user, ingest_user):
    return as_user(ingest_user)


def post_json(client, rows):
    return client.post(URL, json.dumps({"observations": rows}), content_type="application/json")


def post_ndjson(client, rows):
    return client.post(URL, "\n".join(json.dumps(r) for r in rows), content_type="application/x-ndjson")


BOTH_PATHS = pytest.mark.parametrize("post", [post_json, post_ndjson], ids=["typed", "row-by-row"])


def row_errors(response) -> list[tuple]:
    return [(e["index"], e["field"]) for e in response.json()["errors"]]


def nothing_written() -> bool:
    return not Observation.objects.exists() and not IngestBatch.objects.exists()


def nested(depth: int, leaf: str = "1") -> str:
    """JSON text of `depth` objects, one inside the other."""
    return '{"a":' * depth + leaf + "}" * depth


# --- deep nesting ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "[" * 2000 + "]" * 2000,
        '{"observations": ' + "[" * 2000 + "]" * 2000 + "}",
        # Past orjson's 1,024 levels, and past the standard parser's stack when orjson fails elsewhere.
        '{"observations": [{"value": NaN, "tags": ' + nested(2000) + "}]}",
    ],
    ids=["whole-body", "observations", "tags-with-nan"],
)
def test_a_body_nested_2000_deep_is_a_400_naming_the_problem(client, ref, body):
    response = client.post(URL, body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == "body"
    assert "nested" in response.json()["detail"]
    assert nothing_written()


def test_tags_nested_2000_deep_in_a_json_body_are_a_400(client, ref):
    good = json.dumps(row(0))
    bad = json.dumps(row(1, tags={})).replace('"tags": {}', f'"tags": {nested(2000)}')
    response = client.post(URL, f'{{"observations": [{good}, {bad}]}}', content_type="application/json")
    assert response.status_code == 400, response.content
    assert "nested" in response.json()["detail"]
    assert nothing_written()


def test_an_ndjson_line_nested_2000_deep_is_that_rows_error(client, ref):
    lines = [json.dumps(row(0)), '{"tags": ' + nested(2000) + "}", json.dumps(row(2))]
    response = client.post(URL, "\n".join(lines), content_type="application/x-ndjson")
    assert response.status_code == 422, response.content
    [error] = response.json()["errors"]
    assert error["index"] == 1
    assert "nested too deeply" in error["message"]
    assert nothing_written()


def test_an_ndjson_line_that_is_not_json_is_that_rows_error(client, ref):
    lines = [json.dumps(row(0)), "{not json", json.dumps(row(2))]
    response = client.post(URL, "\n".join(lines), content_type="application/x-ndjson")
    assert response.status_code == 422
    assert row_errors(response) == [(1, None)]
    assert "not valid JSON" in response.json()["errors"][0]["message"]


def test_csv_tags_nested_2000_deep_are_a_tags_error(client, ref):
    at = row(0)["observed_at"]
    cell = nested(2000).replace('"', '""')
    body = f'metric,system,workload,value,observed_at,tags\nlatency,rebuilt,finetune,1,{at},"{cell}"\n'
    response = client.post(URL, body, content_type="text/csv")
    assert response.status_code == 422, response.content
    assert row_errors(response) == [(0, "tags")]
    assert nothing_written()


@BOTH_PATHS
def test_tags_deeper_than_the_limit_are_a_row_error_and_at_the_limit_are_kept(client, ref, post):
    deep = json.loads(nested(MAX_TAG_DEPTH + 1))
    response = post(client, [row(0, tags=json.loads(nested(MAX_TAG_DEPTH))), row(1, tags=deep)])
    assert response.status_code == 422
    assert row_errors(response) == [(1, "tags")]
    assert response.json()["errors"][0]["message"].startswith("tags.a.a.a.a: nested deeper than 4 levels")
    assert nothing_written()
    kept = post(client, [row(0, tags=json.loads(nested(MAX_TAG_DEPTH)))])
    assert kept.status_code == 201, kept.json()


# --- lone surrogates ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("run_id", f"run{LONE}"),
        ("source", LONE),
        ("unit", f"m{LONE}"),
        ("system", LONE),
        ("workload", f"x{LONE}"),
        ("metric", LONE),
        ("observed_at", LONE),
        ("value", LONE),
        ("tags", {"host": LONE}),
        ("tags", {LONE: "gpu-7"}),
        ("tags", {"a": [{"b": f"x{LONE}"}]}),
    ],
)
@BOTH_PATHS
def test_a_lone_surrogate_is_a_row_error_naming_the_field(client, ref, post, field, value):
    """json.dumps writes "\\ud800" escapes, the way the probe sent them."""
    response = post(client, [row(0), row(1, **{field: value})])
    assert response.status_code == 422, response.content
    assert row_errors(response) == [(1, field)]
    assert nothing_written()


def test_an_escaped_surrogate_in_a_csv_tags_cell_is_a_tags_error(client, ref):
    at = row(0)["observed_at"]
    body = (
        "metric,system,workload,value,observed_at,run_id,tags\n"
        f"latency,rebuilt,finetune,1,{at},a,\n"
        f'latency,rebuilt,finetune,1,{at},b,"{{""host"": ""\\ud800""}}"\n'
    )
    response = client.post(URL, body, content_type="text/csv")
    assert response.status_code == 422, response.content
    assert row_errors(response) == [(1, "tags")]
    assert nothing_written()


def test_a_raw_surrogate_in_csv_is_not_utf8(client, ref):
    at = row(0)["observed_at"]
    body = f"metric,system,workload,value,observed_at,run_id\nlatency,rebuilt,finetune,1,{at},".encode()
    response = client.post(URL, body + b"\xed\xa0\x80\n", content_type="text/csv")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "body"
    assert nothing_written()


def test_a_valid_surrogate_pair_is_just_text(client, ref):
    response = post_json(client, [row(0, run_id="run-\U0001f680", tags={"emoji": "\U0001f600"})])
    assert response.status_code == 201, response.json()
    assert Observation.objects.get().run_id == "run-\U0001f680"


# --- values ------------------------------------------------------------------------------------------


@pytest.fixture
def step_time(ref):
    """A duration in ms that cannot be negative, and a share bounded to 0..100."""
    return {
        "step": definition(key="step-time", unit="ms", sampling="per_step", min_value=0.0),
        "share": definition(key="wait-share", unit="percent", min_value=0.0, max_value=100.0),
    }


@BOTH_PATHS
def test_a_negative_duration_is_a_row_error_naming_the_minimum(client, step_time, post):
    response = post(
        client, [row(0, metric="step-time", value=5, unit="ms"), row(1, metric="step-time", value=-5)]
    )
    assert response.status_code == 422, response.json()
    assert row_errors(response) == [(1, "value")]
    assert "below the minimum of step-time@1, 0 ms" in response.json()["errors"][0]["message"]
    assert nothing_written()


@BOTH_PATHS
def test_bounds_apply_after_unit_conversion(client, step_time, post):
    response = post(client, [row(0, metric="step-time", value=-0.005, unit="s")])
    assert row_errors(response) == [(0, "value")]
    over = post(client, [row(0, metric="wait-share", value=1.5, unit="dimensionless")])
    assert row_errors(over) == [(0, "value")]
    assert "above the maximum of wait-share@1, 100 percent" in over.json()["errors"][0]["message"]
    at_bounds = post(
        client,
        [row(0, metric="wait-share", value=100, unit="percent"), row(1, metric="step-time", value=0)],
    )
    assert at_bounds.status_code == 201, at_bounds.json()


@pytest.mark.parametrize("text", ["1_000", "1 000", " 1", "0x10", "١٢", "infinity", "1e", "--1", ""])
@BOTH_PATHS
def test_a_value_not_written_as_a_decimal_number_is_a_row_error(client, ref, post, text):
    response = post(client, [row(0), row(1, value=text)])
    assert response.status_code == 422
    assert row_errors(response) == [(1, "value")]
    assert nothing_written()


@pytest.mark.parametrize(("text", "number"), [("0.5", 0.5), ("-3", -3.0), ("1e-05", 1e-05), (".5", 0.5)])
def test_a_value_as_decimal_text_is_still_accepted(client, ref, text, number):
    response = post_json(client, [row(0, value=text)])
    assert response.status_code == 201, response.json()
    assert Observation.objects.get().value == number


def test_a_csv_value_with_an_underscore_is_a_row_error(client, ref):
    at = row(0)["observed_at"]
    body = f"metric,system,workload,value,observed_at\nlatency,rebuilt,finetune,1_000,{at}\n"
    response = client.post(URL, body, content_type="text/csv")
    assert response.status_code == 422
    assert row_errors(response) == [(0, "value")]


# --- tags --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tags", "says"),
    [
        ({"k": "x" * 1_000_000}, "the value is 1,000,000 characters"),
        ({f"k{i}": i for i in range(10_000)}, "10,000 keys"),
        ({f"k{i}": i for i in range(MAX_TAG_ITEMS + 1)}, f"{MAX_TAG_ITEMS + 1} keys"),
        ({"k" * (MAX_TAG_KEY_LENGTH + 1): 1}, "the key is 65 characters"),
        ({"k": "x" * (MAX_TAG_TEXT_LENGTH + 1)}, "the value is 257 characters"),
        ({"k": list(range(MAX_TAG_ITEMS + 1))}, "65 items"),
        ({f"k{i}": "x" * 200 for i in range(30)}, "bytes as JSON; the limit is 4,096"),
        ({"k": [[1] * 64] * 64}, "more than 4,096 bytes"),
        ({"k": "a\u0000"}, "NUL"),
        ("host=gpu-7", "must be a JSON object"),
    ],
    ids=[
        "1MB-value",
        "10000-keys",
        "65-keys",
        "long-key",
        "long-value",
        "long-list",
        "4KiB",
        "many-small",
        "nul",
        "not-object",
    ],
)
@BOTH_PATHS
def test_tags_beyond_a_limit_are_a_row_error_naming_it(client, ref, post, tags, says):
    response = post(client, [row(0, tags={"host": "gpu-7"}), row(1, tags=tags)])
    assert response.status_code == 422, response.content
    assert row_errors(response) == [(1, "tags")]
    assert says in response.json()["errors"][0]["message"]
    assert nothing_written()


def test_a_20_mb_tag_value_is_refused_without_a_500(client, ref):
    body = json.dumps({"observations": [row(0, tags={"blob": "x" * 20_000_000})]})
    response = client.post(URL, body, content_type="application/json")
    assert response.status_code == 422
    assert row_errors(response) == [(0, "tags")]
    assert len(response.content) < 1000  # the value is not echoed
    assert nothing_written()


def at_the_byte_limit() -> dict:
    """21 values of 186 characters: exactly MAX_TAG_BYTES of JSON."""
    tags = {f"k{i:02d}": "x" * 186 for i in range(21)}
    assert len(json.dumps(tags, separators=(",", ":"))) == MAX_TAG_BYTES
    return tags


@pytest.mark.parametrize(
    "tags",
    [
        {f"k{i}": i for i in range(MAX_TAG_ITEMS)},
        {"k" * MAX_TAG_KEY_LENGTH: "x" * MAX_TAG_TEXT_LENGTH},
        {"k": list(range(MAX_TAG_ITEMS))},
        json.loads(nested(MAX_TAG_DEPTH)),
        at_the_byte_limit(),
    ],
    ids=["keys", "key-and-value-length", "items", "depth", "bytes"],
)
@BOTH_PATHS
def test_tags_at_each_limit_are_kept(client, ref, post, tags):
    response = post(client, [row(0, tags=tags)])
    assert response.status_code == 201, response.json()
    assert Observation.objects.get().tags == tags


# --- definition bounds -------------------------------------------------------------------------------


def register(client, **fields):
    return client.post(DEFINITIONS, definition_body(**fields), format="json")


@pytest.mark.parametrize(
    ("fields", "bounds"),
    [
        ({"unit": "ms"}, (0.0, None)),
        ({"unit": "token/s"}, (0.0, None)),
        ({"unit": "1/hour"}, (0.0, None)),
        ({"unit": "percent"}, (None, None)),
        ({"unit": "USD"}, (None, None)),
        ({"unit": "ms", "min_value": None}, (None, None)),
        ({"unit": "percent", "min_value": 0, "max_value": 100}, (0.0, 100.0)),
    ],
)
def test_durations_counts_and_rates_are_non_negative_unless_told_otherwise(
    as_user, metric_owner, fields, bounds
):
    response = register(as_user(metric_owner), **fields)
    assert response.status_code == 201, response.json()
    assert (response.json()["min_value"], response.json()["max_value"]) == bounds
    assert (MetricDefinition.objects.get().min_value, MetricDefinition.objects.get().max_value) == bounds


def test_a_minimum_above_the_maximum_is_refused(as_user, metric_owner):
    response = register(as_user(metric_owner), min_value=5, max_value=1)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "max_value"
    negative_max = register(as_user(metric_owner), max_value=-1)  # below the default minimum of 0
    assert negative_max.status_code == 400
    assert not MetricDefinition.objects.exists()


def test_bounds_are_editable_on_a_draft_and_need_a_new_version_once_active(as_user, metric_owner, step_time):
    client = as_user(metric_owner)
    draft = register(client).json()
    edited = client.patch(f"{DEFINITIONS}probe/versions/1/", {"max_value": 10_000}, format="json")
    assert edited.status_code == 200, edited.json()
    assert edited.json()["max_value"] == 10_000 == MetricDefinition.objects.get(pk=draft["id"]).max_value
    refused = client.patch(f"{DEFINITIONS}step-time/versions/1/", {"min_value": None}, format="json")
    assert refused.status_code == 409
    assert [e["field"] for e in refused.json()["errors"]] == ["min_value"]
    assert MetricDefinition.objects.get(key="step-time").min_value == 0.0
    version = client.post(
        f"{DEFINITIONS}step-time/versions/", {"min_value": None, "max_value": 60_000}, format="json"
    )
    assert version.status_code == 201, version.json()
    assert (version.json()["min_value"], version.json()["max_value"]) == (None, 60_000)
    created = Transition.objects.get(action="version_created")
    assert created.data["changes"] == ["min value: 0.0 → —", "max value: — → 60000.0"]


def test_the_migration_bounds_existing_durations_unless_negative_values_are_stored(ref):
    """Definitions registered before bounds existed get the same default as new ones."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module("metrics.migrations.0004_definition_value_bounds")
    definition(key="step-time", unit="ms")
    definition(key="wait-share", unit="percent")
    offset = definition(key="clock-offset", unit="ms")
    Observation.objects.create(
        definition=offset,
        system=ref["rebuilt"],
        workload=ref["medium"],
        value=-3.0,
        unit="ms",
        observed_at=ref["latency"].created_at,
    )
    migration.bound_never_negative_units(apps, None)
    bounds = dict(MetricDefinition.objects.values_list("key", "min_value"))
    assert bounds == {"latency": 0.0, "step-time": 0.0, "wait-share": None, "clock-offset": None}
