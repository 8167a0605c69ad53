"""The two write paths — the direct copy, and the merge when the primary key refuses it — give the
same answers: a repeat is a no-op, another value a row error naming its index, a partly repeated
batch stores only its new rows."""

from __future__ import annotations

import pytest
from django.db import connection

from metrics.ingest import write
from metrics.models import Observation
from tests.metrics.factories import row
from tests.pg_stats import observation_scans

pytestmark = pytest.mark.perf  # query plans and PostgreSQL's counters over many rows

URL = "/api/v1/observations/batch/"


@pytest.fixture
def client(as_user, ingest_user):
    return as_user(ingest_user)


@pytest.fixture
def merges(monkeypatch) -> list[int]:
    """How many rows each batch sent through the merge (the conflict path)."""
    calls: list[int] = []
    merge = write._merge

    def counted(raw, valid, batch_id):
        calls.append(len(valid))
        return merge(raw, valid, batch_id)

    monkeypatch.setattr(write, "_merge", counted)
    return calls


def post(client, rows):
    return client.post(URL, {"observations": rows}, format="json")


def test_new_rows_of_a_stored_run_are_copied_straight_in(client, ref, merges):
    rows = [row(i, run_id="long-run") for i in range(6)]
    assert post(client, rows[:3]).status_code == 201
    response = post(client, rows[3:])
    assert response.status_code == 201, response.json()
    assert (response.json()["inserted"], response.json()["duplicates"]) == (3, 0)
    assert merges == []  # nothing collides: no merge, whether the run is stored or not
    assert Observation.objects.filter(run_id="long-run").count() == 6


def test_a_batch_reads_nothing_of_the_observations_before_copying(client, ref, merges):
    """No probe of stored runs, which a planner misled by a month's partition analysed when it held
    one run turned into a scan of the whole partition per new run (ingest at a tenth of its rate on
    the 1st of the month): the copy is the only statement that touches the table."""
    assert post(client, [row(0, run_id="first")]).status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE metrics_observation")  # early in the month: one run
    before = observation_scans()
    response = post(client, [row(i, run_id=f"run-{i}") for i in range(1, 50)])
    assert response.status_code == 201
    assert response.json()["inserted"] == 49
    assert observation_scans() == before
    assert merges == []


def test_a_batch_repeating_a_row_within_itself_stores_it_once_without_the_merge(client, ref, merges):
    """The check drops a row repeating an earlier one of the batch with the same value, so the direct
    copy stores it once and the merge is not needed."""
    first = row(0, run_id="inner")
    rows = [first, row(1, run_id="inner"), dict(first)]
    response = post(client, rows)
    assert response.status_code == 201, response.json()
    assert (response.json()["inserted"], response.json()["duplicates"]) == (2, 1)
    assert merges == []
    assert Observation.objects.filter(run_id="inner").count() == 2


def test_fast_and_conflict_paths_store_the_same_and_a_repeat_is_a_no_op(client, ref, merges):
    rows = [row(i, run_id="twice", tags={"host": f"h{i}"}) for i in range(4)]
    first = post(client, rows)
    assert first.status_code == 201
    assert merges == []
    stored = sorted(Observation.objects.values_list("observed_at", "value", "unit", "tags", "batch_id"))
    again = post(client, rows)
    assert again.status_code == 201
    assert (again.json()["inserted"], again.json()["duplicates"]) == (0, 4)
    assert merges == [4]
    assert (
        sorted(Observation.objects.values_list("observed_at", "value", "unit", "tags", "batch_id")) == stored
    )


def test_a_partly_repeated_batch_stores_only_its_new_rows(client, ref, merges):
    rows = [row(i, run_id="partly") for i in range(4)]
    assert post(client, rows[:2]).status_code == 201
    response = post(client, rows)
    assert response.status_code == 201
    assert (response.json()["inserted"], response.json()["duplicates"]) == (2, 2)
    assert merges == [4]
    assert Observation.objects.filter(run_id="partly").count() == 4


def test_a_conflicting_value_is_a_row_error_with_its_index_and_nothing_is_written(client, ref, merges):
    rows = [row(i, run_id="conflict") for i in range(4)]
    assert post(client, rows[:2]).status_code == 201
    changed = [*rows[:1], {**rows[1], "value": 9.5}, *rows[2:]]
    response = post(client, changed)
    assert response.status_code == 422
    assert [(e["index"], e["field"]) for e in response.json()["errors"]] == [(1, "value")]
    assert "already recorded with value 0.25" in response.json()["errors"][0]["message"]
    assert Observation.objects.filter(run_id="conflict").count() == 2
