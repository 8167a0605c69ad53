"""`rebuild-tracker observations push FILE` against the live server: JSON, NDJSON and CSV as the batch
API takes them, with an Idempotency-Key from the file's bytes, so a retried CI step stores one batch."""

from __future__ import annotations

import csv
import io
import json

import pytest

from metrics.models import IngestBatch, Observation
from tests.clients.cli import run_cli
from tests.conftest import api_token, make_user
from tests.metrics.factories import reference_data, row


@pytest.fixture
def token(transactional_db):
    reference_data()  # latency in s, systems legacy/rebuilt, workload finetune
    return api_token(make_user("ci-pusher", perms=("metrics.add_observation",)), "ingest")


def push(live_server, token: str, path, *args: str):
    return run_cli("observations", "push", str(path), *args, url=live_server.url, token=token)


def test_pushing_the_same_file_twice_stores_one_batch(live_server, token, tmp_path):
    batch = tmp_path / "bench.json"
    batch.write_text(json.dumps({"observations": [row(i) for i in range(3)]}))
    first = push(live_server, token, batch)
    assert first.returncode == 0, first.stderr
    assert (
        first.stdout.startswith("pushed: batch ") and "(3 received, 3 new, 0 already stored)" in first.stdout
    )
    again = push(live_server, token, batch)  # the retried CI step
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("already pushed: batch ")
    assert IngestBatch.objects.count() == 1
    assert Observation.objects.count() == 3
    # The replay answers the first push's batch.
    assert first.stdout.split()[2] == again.stdout.split()[3]


def test_another_file_is_another_batch(live_server, token, tmp_path):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text(json.dumps({"observations": [row(0)]}))
    two.write_text(json.dumps({"observations": [row(1)]}))
    assert push(live_server, token, one).returncode == 0
    assert push(live_server, token, two).returncode == 0
    assert IngestBatch.objects.count() == 2


def test_ndjson_and_csv_are_pushed_by_their_suffix(live_server, token, tmp_path):
    ndjson = tmp_path / "bench.ndjson"
    ndjson.write_text("".join(json.dumps(row(i)) + "\n" for i in range(2)))
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=list(row(0)))
    writer.writeheader()
    writer.writerows(row(i, system="legacy") for i in range(4))
    sheet = tmp_path / "bench.csv"
    sheet.write_text(table.getvalue())
    assert push(live_server, token, ndjson).returncode == 0
    assert push(live_server, token, sheet).returncode == 0
    assert Observation.objects.filter(system__key="rebuilt").count() == 2
    assert Observation.objects.filter(system__key="legacy").count() == 4


def test_format_names_the_type_of_a_file_without_a_known_suffix(live_server, token, tmp_path):
    lines = tmp_path / "bench.out"
    lines.write_text(json.dumps(row(0)) + "\n")
    refused = push(live_server, token, lines)
    assert refused.returncode == 2 and "--format" in refused.stderr
    assert push(live_server, token, lines, "--format", "ndjson").returncode == 0
    assert Observation.objects.count() == 1


def test_a_bad_row_is_exit_2_naming_row_and_field_and_stores_nothing(live_server, token, tmp_path):
    batch = tmp_path / "bench.json"
    batch.write_text(json.dumps({"observations": [row(0), row(1, system="nope")]}))
    done = push(live_server, token, batch)
    assert done.returncode == 2
    assert done.stderr.startswith("error: HTTP 422: ")
    assert "row 1 system: " in done.stderr
    assert Observation.objects.count() == 0


def test_json_prints_the_apis_answer(live_server, token, tmp_path):
    batch = tmp_path / "bench.json"
    batch.write_text(json.dumps({"observations": [row(0)]}))
    done = push(live_server, token, batch, "--json")
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert answer["inserted"] == 1 and answer["batch"] == IngestBatch.objects.get().pk


def test_a_missing_file_is_exit_2(live_server, token, tmp_path):
    done = push(live_server, token, tmp_path / "gone.json")
    assert done.returncode == 2 and "cannot read" in done.stderr


def test_a_token_without_ingest_is_exit_2_and_stores_nothing(live_server, token, tmp_path, viewer):
    batch = tmp_path / "bench.json"
    batch.write_text(json.dumps({"observations": [row(0)]}))
    done = push(live_server, api_token(viewer, "freeze-check"), batch)
    assert done.returncode == 2 and "HTTP 403" in done.stderr
    assert Observation.objects.count() == 0
