"""observations_ingest through POST /api/v1/observations/batch/: every rule has a test."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from core.models import OutboxMessage
from metrics.ingest import MAX_ROWS
from metrics.models import IngestBatch, Observation
from tests.metrics.factories import definition, reference_data, row

URL = "/api/v1/observations/batch/"


@pytest.fixture
def client(as_user, ingest_user):
    return as_user(ingest_user)


def post(client, rows, **headers):
    return client.post(URL, {"observations": rows}, format="json", headers=headers)


def errors_of(response) -> list[tuple[int, str]]:
    return [(error["index"], error["field"]) for error in response.json()["errors"]]


def test_valid_batch_is_stored_and_announced(client, ref):
    from metrics.signals import observations_ingested

    callbacks = []
    observations_ingested.connect(
        lambda sender, **kwargs: callbacks.append(kwargs), weak=False, dispatch_uid="t"
    )
    try:
        response = post(client, [row(0), row(1, system="legacy", value=0.3)])
    finally:
        observations_ingested.disconnect(dispatch_uid="t")
    assert response.status_code == 201, response.json()
    assert response.json()["inserted"] == 2
    assert response.json()["definitions"] == ["latency@1"]
    assert Observation.objects.count() == 2
    batch = IngestBatch.objects.get()
    assert batch.definition_ids == [ref["latency"].pk]
    assert batch.workload_ids == [ref["medium"].pk]
    # One announcement per batch, never per row, and its listeners' follow-ups (one coalesced rollup
    # refresh) queued in the batch's transaction.
    assert len(callbacks) == 1
    assert OutboxMessage.objects.filter(task="metrics.tasks.rollups_refresh").count() == 1
    assert (batch.observed_from, batch.observed_to) == (
        min(o.observed_at for o in Observation.objects.all()),
        max(o.observed_at for o in Observation.objects.all()),
    )


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"metric": "nope"}, "metric"),
        ({"system": "mainframe"}, "system"),
        ({"workload": "unknown"}, "workload"),
    ],
)
def test_unknown_references_are_row_errors(client, ref, override, field):
    response = post(client, [row(0), row(1, **override)])
    assert response.status_code == 422
    assert errors_of(response) == [(1, field)]
    assert Observation.objects.count() == 0


@pytest.mark.parametrize("bad", ["nan", "NaN", "Infinity", "-inf", "abc", None, True])
def test_non_finite_or_non_numeric_values_are_row_errors(client, ref, bad):
    response = post(client, [row(0, value=bad)])
    assert response.status_code == 422
    assert errors_of(response) == [(0, "value")]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400", "1" + "0" * 400])
def test_non_finite_json_literals_are_row_errors_not_a_broken_body(client, ref, literal):
    good = json.dumps(row(0))
    bad = json.dumps(row(1)).replace('"value": 0.25', f'"value": {literal}')
    body = f'{{"observations": [{good}, {bad}]}}'
    response = client.post(URL, body, content_type="application/json")
    assert response.status_code == 422
    assert errors_of(response) == [(1, "value")]


def test_convertible_unit_is_converted_and_arrival_unit_kept(client, ref):
    response = post(client, [row(0, value=250, unit="ms")])
    assert response.status_code == 201
    stored = Observation.objects.get()
    assert stored.value == pytest.approx(0.25)
    assert stored.unit == "ms"


def test_wrong_dimension_unit_names_both_units(client, ref):
    response = post(client, [row(0, unit="token/s")])
    assert response.status_code == 422
    message = response.json()["errors"][0]["message"]
    assert "'token/s'" in message and "'s'" in message


def test_unknown_unit_is_a_row_error(client, ref):
    response = post(client, [row(0, unit="parsecs-per-fortnight!")])
    assert errors_of(response) == [(0, "unit")]


def test_naive_timestamp_is_a_row_error(client, ref):
    naive = datetime(2026, 11, 1, 12, 0).isoformat()  # noqa: DTZ001 - the naive time is the input under test
    response = post(client, [row(0, observed_at=naive)])
    assert errors_of(response) == [(0, "observed_at")]
    assert "timezone" in response.json()["errors"][0]["message"]


def test_far_future_timestamp_is_a_row_error_small_skew_is_fine(client, ref):
    soon = (timezone.now() + timedelta(minutes=2)).isoformat()
    later = (timezone.now() + timedelta(minutes=6)).isoformat()
    response = post(client, [row(0, observed_at=soon), row(1, observed_at=later)])
    assert errors_of(response) == [(1, "observed_at")]


def test_deprecated_definition_is_a_row_error(client, ref):
    # A draft takes rows (shadow data): tests/metrics/test_versions_ingest.py.
    definition(key="latency", version=2, status="deprecated")
    response = post(client, [row(0, metric="latency@2")])
    assert errors_of(response) == [(0, "metric")]
    assert "deprecated" in response.json()["errors"][0]["message"]


def test_same_natural_key_same_value_is_a_no_op(client, ref):
    first = row(0)
    assert post(client, [first]).status_code == 201
    again = post(client, [first, row(1)])
    assert again.status_code == 201
    assert again.json()["inserted"] == 1
    assert again.json()["duplicates"] == 1
    assert Observation.objects.count() == 2


def test_same_natural_key_other_value_is_a_row_error_and_nothing_is_written(client, ref):
    first = row(0)
    assert post(client, [first]).status_code == 201
    response = post(client, [row(5), {**first, "value": 9.0}])
    assert response.status_code == 422
    assert errors_of(response) == [(1, "value")]
    assert Observation.objects.count() == 1
    assert IngestBatch.objects.count() == 1


def test_conflict_inside_one_batch_is_a_row_error(client, ref):
    first = row(0)
    response = post(client, [first, {**first, "value": 1.0}])
    assert errors_of(response) == [(1, "value")]


def test_batch_is_all_or_nothing_and_lists_every_bad_row(client, ref):
    rows = [row(0), row(1, value="nan"), row(2), row(3, system="x", workload="y")]
    response = post(client, rows)
    assert response.status_code == 422
    assert errors_of(response) == [(1, "value"), (3, "system"), (3, "workload")]
    assert response.json()["detail"].startswith("2 of 4 observations are invalid")
    assert Observation.objects.count() == 0
    assert IngestBatch.objects.count() == 0


def test_idempotency_key_replays_the_first_answer(client, ref):
    rows = [row(0), row(1)]
    first = post(client, rows, **{"Idempotency-Key": "abc-1"})
    replay = post(client, rows, **{"Idempotency-Key": "abc-1"})
    assert first.status_code == replay.status_code == 201
    assert replay.json() == first.json()
    assert replay["Idempotent-Replay"] == "true"
    assert Observation.objects.count() == 2
    assert IngestBatch.objects.count() == 1


def test_idempotency_key_with_another_body_is_422(client, ref):
    post(client, [row(0)], **{"Idempotency-Key": "abc-2"})
    response = post(client, [row(0), row(1)], **{"Idempotency-Key": "abc-2"})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "Idempotency-Key"
    assert Observation.objects.count() == 1


def test_more_than_the_limit_is_413_naming_it(client, ref):
    response = post(client, [row(0)] * (MAX_ROWS + 1))
    assert response.status_code == 413
    assert "50,000" in response.json()["detail"]
    assert Observation.objects.count() == 0


def test_ndjson_and_csv_bodies(client, ref):
    ndjson = "\n".join(json.dumps(row(i)) for i in range(3))
    response = client.post(URL, ndjson, content_type="application/x-ndjson")
    assert response.status_code == 201, response.json()
    assert response.json()["inserted"] == 3
    at = (timezone.now() - timedelta(hours=1)).isoformat()
    csv_body = "metric,system,workload,value,unit,observed_at,run_id,tags\n" + (
        f'latency,legacy,finetune,120,ms,{at},csv-1,"{{""host"": ""a1""}}"\n'
    )
    response = client.post(URL, csv_body, content_type="text/csv")
    assert response.status_code == 201, response.json()
    stored = Observation.objects.get(run_id="csv-1")
    assert stored.value == pytest.approx(0.12)
    assert stored.tags == {"host": "a1"}


def test_a_csv_body_with_a_bare_cr_is_a_400_naming_the_body_and_stores_nothing(client, ref):
    at = (timezone.now() - timedelta(hours=1)).isoformat()
    csv_body = (
        "metric,system,workload,value,unit,observed_at,run_id\n"
        f"latency,legacy,finetune,120,ms,{at},csv-1\n"
        f"latency,legacy,fine\rtune,121,ms,{at},csv-2\n"
    )
    response = client.post(URL, csv_body, content_type="text/csv")
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == "body"
    assert "at line 3" in response.json()["detail"]
    assert not Observation.objects.exists()


def test_malformed_bodies_get_clear_4xx(client, ref):
    assert client.post(URL, "{not json", content_type="application/json").status_code == 400
    wrong_shape = client.post(URL, {"rows": []}, format="json")
    assert wrong_shape.status_code == 400
    assert wrong_shape.json()["errors"][0]["field"] == "observations"
    unsupported = client.post(URL, "x", content_type="application/xml")
    assert unsupported.status_code == 415
    non_object = post(client, [1, "two"])
    assert errors_of(non_object) == [(0, None), (1, None)]


def test_ingest_needs_the_add_observation_permission(as_user, viewer, ref):
    response = post(as_user(viewer), [row(0)])
    assert response.status_code == 403
    assert "add_observation" in response.json()["detail"]
    assert Observation.objects.count() == 0


def test_anonymous_ingest_is_401(api, ref):
    assert post(api, [row(0)]).status_code == 401


def test_a_reference_deprecated_meanwhile_is_caught_when_writing(ref, ingest_user):
    """The row check reads a snapshot; the write re-checks the rows it locks, so nothing orphaned lands."""
    from core.errors import ApplicationError
    from metrics.ingest.check import Lookups, check_rows
    from metrics.ingest.write import batch_write

    lookups = Lookups()
    valid, errors = check_rows([row(0)], lookups)
    assert not errors
    ref["latency"].status = "deprecated"
    ref["latency"].save()
    with pytest.raises(ApplicationError, match="changed while it was written"):
        batch_write(valid, received=1, submitted_by=ingest_user, source="")
    assert Observation.objects.count() == 0


def test_new_runs_take_the_direct_copy_and_keep_batch_and_tags(client, ref):
    response = post(client, [row(0, run_id="fresh", tags={"host": "gpu-7"})])
    assert response.status_code == 201
    stored = Observation.objects.get(run_id="fresh")
    assert stored.batch_id == response.json()["batch"]
    assert stored.tags == {"host": "gpu-7"}


@pytest.mark.django_db(transaction=True)
def test_two_batches_of_the_same_new_run_at_once_store_it_once(ingest_user):
    import threading

    from django.db import connection

    from metrics.ingest import observations_ingest_rows

    reference_data()
    rows = [row(i, run_id="same-run") for i in range(50)]
    barrier, results, errors = threading.Barrier(2), [], []

    def push():
        try:
            barrier.wait()
            results.append(observations_ingest_rows(rows=rows, actor=ingest_user).inserted)
        except Exception as exc:  # reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=push) for _ in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert errors == []
    assert sorted(results) == [0, 50]
    assert Observation.objects.count() == 50
