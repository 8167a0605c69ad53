"""The ingest service (metrics.ingest) is the one way in: every format's body goes to it as it came, an
Idempotency-Key is answered from it once, and a stored batch is announced inside its own transaction."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Q
from django.utils import timezone
from rest_framework.test import APIClient

from config.celery import app
from core import idempotency
from core.errors import ApplicationError
from core.models import IdempotencyRecord, OutboxMessage
from metrics.ingest import observations_ingest, observations_ingest_rows
from metrics.models import IngestBatch, Observation
from metrics.signals import observations_ingested
from program.models import Gate
from tests.conftest import api_token
from tests.metrics.factories import row
from tests.metrics.test_otlp_receiver import PROTOBUF, export, gauge
from tests.program.factories import make_program, metrics_for_template

URL = "/api/v1/observations/batch/"
OTLP = "/otlp/v1/metrics"
FIELDS = ["metric", "system", "workload", "value", "unit", "observed_at", "run_id"]


def as_json(rows: list[dict]) -> bytes:
    return json.dumps({"observations": rows}).encode()


def as_ndjson(rows: list[dict]) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


def as_csv(rows: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, FIELDS)
    writer.writeheader()
    writer.writerows({name: r.get(name, "") for name in FIELDS} for r in rows)
    return out.getvalue().encode()


FORMATS = {
    "application/json": as_json,
    "application/x-ndjson": as_ndjson,
    "text/csv": as_csv,
}


@pytest.fixture
def lookups_spy(monkeypatch):
    """How often the stored answer is looked up (once per request, wherever it is asked for)."""
    calls = []
    real = idempotency.recorded

    def spy(**kwargs):
        calls.append(kwargs["key"])
        return real(**kwargs)

    monkeypatch.setattr(idempotency, "recorded", spy)
    return calls


@pytest.mark.parametrize("content_type", FORMATS)
def test_same_key_twice_stores_one_batch_and_replays_the_first_answer(
    content_type, ref, ingest_user, lookups_spy
):
    client = APIClient()
    client.force_authenticate(ingest_user)
    body = FORMATS[content_type]([row(i) for i in range(3)])
    headers = {"Idempotency-Key": f"k-{content_type}"}
    first = client.generic("POST", URL, body, content_type=content_type, headers=headers)
    again = client.generic("POST", URL, body, content_type=content_type, headers=headers)
    assert first.status_code == again.status_code == 201, first.content
    assert again.json() == first.json()
    assert "Idempotent-Replay" not in first and again["Idempotent-Replay"] == "true"
    assert IngestBatch.objects.count() == 1 and Observation.objects.count() == 3
    assert lookups_spy == [f"k-{content_type}"] * 2  # one look-up per request, not two


def test_otlp_with_a_key_is_replayed_and_without_one_just_ingests(ref, ingest_user, lookups_spy):
    token = api_token(ingest_user, "ingest")
    body = export(gauge("latency", 250.0, 300.0, unit="ms")).SerializeToString()

    def send(**headers):
        response = APIClient().generic(
            "POST", OTLP, body, content_type=PROTOBUF, headers={"Authorization": f"Bearer {token}", **headers}
        )
        assert response.status_code == 200, response.content
        return response

    first, again = send(**{"Idempotency-Key": "export-1"}), send(**{"Idempotency-Key": "export-1"})
    assert again.content == first.content and again["Idempotent-Replay"] == "true"
    assert IngestBatch.objects.count() == 1 and Observation.objects.count() == 2
    assert lookups_spy == ["export-1", "export-1"]
    send()  # no key: stored again, a no-op through the natural key, and nothing remembered
    assert IngestBatch.objects.count() == 2 and Observation.objects.count() == 2
    assert IdempotencyRecord.objects.filter(scope="observations.otlp").count() == 1
    assert lookups_spy == ["export-1", "export-1"]


def test_otlp_replay_keeps_partial_success(ref, ingest_user):
    token = api_token(ingest_user, "ingest")
    body = export(gauge("latency", 250.0), gauge("unknown-metric", 1.0)).SerializeToString()
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "partial"}
    answers = [
        APIClient().generic("POST", OTLP, body, content_type=PROTOBUF, headers=headers) for _ in range(2)
    ]
    assert answers[0].content == answers[1].content
    assert b"unknown-metric" in answers[1].content
    assert Observation.objects.count() == 1


@pytest.mark.parametrize("content_type", ["application/x-ndjson", "text/csv"])
def test_ndjson_and_csv_go_through_the_same_service(content_type, ref, ingest_user):
    rows = [row(0), row(1, value="fast")]
    with pytest.raises(ApplicationError) as refused:
        observations_ingest(body=FORMATS[content_type](rows), content_type=content_type, actor=ingest_user)
    assert refused.value.status == 422
    assert [(e["index"], e["field"]) for e in refused.value.errors] == [(1, "value")]
    assert "'fast' is not a number" in refused.value.errors[0]["message"]
    assert Observation.objects.count() == 0
    body = FORMATS[content_type]([row(0), row(1)])
    result = observations_ingest(
        body=body,
        content_type=content_type,
        actor=ingest_user,
        source="test",
        idempotency_key="file-1",
    )
    assert (result.received, result.inserted, result.replayed) == (2, 2, False)
    replay = observations_ingest(
        body=body,
        content_type=content_type,
        actor=ingest_user,
        idempotency_key="file-1",
    )
    assert replay.replayed and replay.as_dict() == result.as_dict()
    assert IngestBatch.objects.get().source == "test"


def step_rows(count: int) -> list[dict]:
    at = timezone.now() - timedelta(hours=1)
    return [
        {
            "metric": "step-time",
            "system": system,
            "workload": "llm-finetune-8b",
            "value": 100.0 + i,
            "observed_at": (at + timedelta(seconds=i)).isoformat(),
            "run_id": f"svc-{system}-{i}",
        }
        for system in ("legacy", "rebuilt")
        for i in range(count)
    ]


def test_the_batch_is_announced_in_its_transaction_and_no_task_relays_it(lead, ingest_user):
    step = metrics_for_template()["step"]
    make_program(lead)
    OutboxMessage.objects.all().delete()
    client = APIClient()
    client.force_authenticate(ingest_user)
    response = client.post(URL, {"observations": step_rows(3)}, format="json")
    assert response.status_code == 201, response.content
    # The receiver (program.receivers) queued the gate evaluations with the batch, through the outbox.
    # (An every-metric criterion, on the template's cutover exit gate, reads every active metric.)
    pinned = Gate.objects.filter(Q(criteria__metric=step) | Q(criteria__kind="every_metric")).distinct()
    queued = OutboxMessage.objects.filter(task="program.tasks.gate_evaluate")
    assert queued.count() == pinned.count() > 0
    app.loader.import_default_modules()
    assert "metrics.tasks.batch_announce" not in app.tasks
    # The only metrics follow-up is the listeners' own work (the rollup refresh), never a relay.
    assert set(OutboxMessage.objects.filter(task__startswith="metrics.").values_list("task", flat=True)) == {
        "metrics.tasks.rollups_refresh"
    }


def test_a_receiver_that_fails_undoes_the_batch(ref, ingest_user):
    seen = []

    def receiver(sender, *, batch_id, definition_ids, workload_ids, **kwargs):
        # Inside the write's transaction: the batch is visible here and not committed yet.
        seen.append((connection.in_atomic_block, IngestBatch.objects.filter(pk=batch_id).exists()))
        raise RuntimeError("receiver failed")

    observations_ingested.connect(receiver, dispatch_uid="test.failing")
    try:
        with pytest.raises(RuntimeError):
            observations_ingest_rows(rows=[row(0)], actor=ingest_user)
    finally:
        observations_ingested.disconnect(dispatch_uid="test.failing")
    assert seen == [(True, True)]
    assert IngestBatch.objects.count() == 0 and Observation.objects.count() == 0


def test_a_batch_of_duplicates_announces_nothing(ref, ingest_user):
    rows = [row(0)]
    observations_ingest_rows(rows=rows, actor=ingest_user)
    sent = []

    def receiver(sender, **kwargs):
        sent.append(kwargs["batch_id"])

    observations_ingested.connect(receiver, dispatch_uid="test.duplicates")
    try:
        again = observations_ingest_rows(rows=rows, actor=ingest_user)
    finally:
        observations_ingested.disconnect(dispatch_uid="test.duplicates")
    assert again.inserted == 0 and sent == []
