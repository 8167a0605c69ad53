"""The two write paths — the direct copy for rows of runs not stored in the batch's time span, the
merge for the rest — give the same answers: a repeat is a no-op, another value a row error naming
its index, a partly repeated batch stores only its new rows."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from metrics.ingest import write
from metrics.ingest.check import Lookups, check_rows
from metrics.models import Observation
from metrics.partitions import observations_partitions_create
from tests.metrics.factories import row

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


def at(days_ago: float, index: int = 0) -> str:
    return (timezone.now() - timedelta(days=days_ago, seconds=index)).isoformat()


def test_a_stored_run_outside_the_batch_span_takes_the_direct_copy(client, ref, merges):
    observations_partitions_create(since=timezone.now() - timedelta(days=70))
    old = [row(i, run_id="long-run", observed_at=at(60, i)) for i in range(3)]
    assert post(client, old).status_code == 201
    new = [row(i, run_id="long-run", observed_at=at(0.01, i)) for i in range(3)]
    response = post(client, new)
    assert response.status_code == 201, response.json()
    assert (response.json()["inserted"], response.json()["duplicates"]) == (3, 0)
    assert merges == []  # no stored row of the run within the new batch's span: nothing to merge
    assert Observation.objects.filter(run_id="long-run").count() == 6


def test_runs_exist_looks_only_within_the_batch_span(ref):
    from django.db import connection

    observations_partitions_create(since=timezone.now() - timedelta(days=70))
    Observation.objects.create(
        definition=ref["latency"],
        system=ref["rebuilt"],
        workload=ref["medium"],
        value=1.0,
        unit="s",
        observed_at=timezone.now() - timedelta(days=60),
        run_id="long-run",
    )
    lookups = Lookups()
    inside, _ = check_rows(
        [row(0, run_id="long-run", observed_at=at(61)), row(1, run_id="long-run")], lookups
    )
    outside, _ = check_rows([row(0, run_id="long-run", observed_at=at(1))], lookups)
    with connection.cursor() as cursor:
        assert write._runs_exist(cursor.cursor, inside) is True
        assert write._runs_exist(cursor.cursor, outside) is False


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
