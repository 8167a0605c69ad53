"""Idempotency-Key on creates and decisions (core.idempotency): one effect per key, replayed answers."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from core.idempotency import MSG_KEY_REUSED
from core.models import IdempotencyRecord
from freeze.models import Approval, FreezeException
from metrics.models import IngestBatch, Observation
from program.models import Decision, Gate
from tests.conftest import make_user
from tests.freeze.factories import exception_payload, freeze_setup, submitted_exception
from tests.metrics.factories import reference_data, row

EXCEPTIONS = "/api/v1/freeze-exceptions/"
KEY = {"HTTP_IDEMPOTENCY_KEY": "retry-7f3a"}


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


def post_raw(client, url, body: str, content_type="application/json", **headers):
    return client.generic("POST", url, body.encode(), content_type=content_type, **headers)


def test_twenty_creates_with_one_key_make_one_exception(as_user, engineer, ref):
    client = as_user(engineer)
    body = json.dumps(exception_payload())
    responses = [post_raw(client, EXCEPTIONS, body, **KEY) for _ in range(20)]
    assert FreezeException.objects.count() == 1
    assert {r.status_code for r in responses} == {201}
    assert all(r.json() == responses[0].json() for r in responses)
    assert "Idempotent-Replay" not in responses[0]
    assert all(r["Idempotent-Replay"] == "true" for r in responses[1:])


def test_without_a_key_each_create_acts(as_user, engineer, ref):
    client = as_user(engineer)
    for _ in range(2):
        assert client.post(EXCEPTIONS, exception_payload(), format="json").status_code == 201
    assert FreezeException.objects.count() == 2


def test_charset_whitespace_and_key_order_do_not_make_another_request(as_user, engineer, ref):
    client = as_user(engineer)
    payload = exception_payload()
    first = post_raw(client, EXCEPTIONS, json.dumps(payload), **KEY)
    reordered = json.dumps(dict(reversed(payload.items())), indent=2)
    for body, content_type in (
        (json.dumps(payload), "application/json; charset=utf-8"),
        (reordered, "application/json"),
        (reordered, "application/json;charset=UTF-8"),
    ):
        replay = post_raw(client, EXCEPTIONS, body, content_type, **KEY)
        assert replay.status_code == 201, replay.json()
        assert replay.json() == first.json()
    assert FreezeException.objects.count() == 1


def test_another_body_with_the_same_key_is_422_naming_the_header(as_user, engineer, ref):
    client = as_user(engineer)
    post_raw(client, EXCEPTIONS, json.dumps(exception_payload()), **KEY)
    response = post_raw(client, EXCEPTIONS, json.dumps(exception_payload(title="Another change")), **KEY)
    assert response.status_code == 422
    assert response.json()["detail"] == MSG_KEY_REUSED
    assert response.json()["errors"] == [{"field": "Idempotency-Key", "message": MSG_KEY_REUSED}]
    assert FreezeException.objects.count() == 1


def test_a_key_longer_than_200_characters_is_400_naming_the_header(as_user, engineer, ref):
    response = as_user(engineer).post(
        EXCEPTIONS, exception_payload(), format="json", HTTP_IDEMPOTENCY_KEY="k" * 201
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "Idempotency-Key"
    assert not FreezeException.objects.exists()


def test_keys_belong_to_their_user(as_user, engineer, ref):
    other = make_user("engineer2", "framework-engineers")
    body = json.dumps(exception_payload())
    mine = post_raw(as_user(engineer), EXCEPTIONS, body, **KEY)
    theirs = post_raw(as_user(other), EXCEPTIONS, body, **KEY)
    assert theirs.status_code == 201
    assert theirs.json()["id"] != mine.json()["id"]
    assert theirs.json()["requester"] == "engineer2"


def test_an_error_is_not_stored_so_a_corrected_retry_acts(as_user, engineer, ref):
    client = as_user(engineer)
    refused = post_raw(client, EXCEPTIONS, json.dumps(exception_payload(risk="extreme")), **KEY)
    assert refused.status_code == 400
    assert not IdempotencyRecord.objects.exists()
    response = post_raw(client, EXCEPTIONS, json.dumps(exception_payload()), **KEY)
    assert response.status_code == 201
    assert FreezeException.objects.count() == 1


def test_a_caller_who_may_not_act_gets_403_not_the_stored_answer(as_user, engineer, viewer, ref):
    body = json.dumps(exception_payload())
    post_raw(as_user(engineer), EXCEPTIONS, body, **KEY)
    assert post_raw(as_user(viewer), EXCEPTIONS, body, **KEY).status_code == 403


@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_with_one_key_make_one_exception(lead, engineer):
    freeze_setup(lead)
    body = json.dumps(exception_payload()).encode()
    threads_count = 4
    barrier, results, lock = threading.Barrier(threads_count), [], threading.Lock()

    def create():
        client = APIClient()
        client.force_authenticate(engineer)
        try:
            barrier.wait()
            response = client.generic(
                "POST", EXCEPTIONS, body, content_type="application/json", HTTP_IDEMPOTENCY_KEY="same"
            )
            with lock:
                results.append((response.status_code, response.json()["id"]))
        finally:
            connection.close()

    threads = [threading.Thread(target=create) for _ in range(threads_count)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert FreezeException.objects.count() == 1
    only = FreezeException.objects.get().pk
    assert results == [(201, only)] * threads_count


# --- decisions -------------------------------------------------------------------------------------


def test_a_replayed_gate_decision_answers_the_first_decision(as_user, lead, ref):
    gate = Gate.objects.get(phase__kind="canary", kind="exit")
    client = as_user(lead)
    url = f"/api/v1/gates/{gate.pk}/decision/"
    first = client.post(url, {"decision": "fail", "note": "not yet"}, format="json", **KEY)
    replay = client.post(url, {"note": "not yet", "decision": "fail"}, format="json", **KEY)
    assert first.status_code == replay.status_code == 201
    assert replay.json() == first.json()
    assert Decision.objects.count() == 1
    # Without the key the repeat is what it is: the gate is decided already.
    assert client.post(url, {"decision": "fail", "note": "not yet"}, format="json").status_code == 409


def test_the_same_key_on_another_gate_is_another_request(as_user, lead, ref):
    client = as_user(lead)
    gates = Gate.objects.filter(kind="exit").order_by("pk")[:2]
    first, second = (
        client.post(f"/api/v1/gates/{g.pk}/decision/", {"decision": "fail"}, format="json", **KEY)
        for g in gates
    )
    assert first.status_code == 201
    assert second.status_code == 422
    assert Decision.objects.count() == 1


def test_a_replayed_exception_approval_counts_once(as_user, engineer, component_owner, ref):
    exception = submitted_exception(engineer, ref["trainer"], ref["now"])
    client = as_user(component_owner)
    url = f"{EXCEPTIONS}{exception.pk}/approve/"
    first = client.post(url, {"comment": "fine"}, format="json", **KEY)
    replay = post_raw(client, url, '{ "comment" : "fine" }', "application/json; charset=utf-8", **KEY)
    assert first.status_code == replay.status_code == 200
    assert replay.json() == first.json()
    assert first.json()["status"] == "approved"
    assert Approval.objects.count() == 1


# --- observations batch: the same contract, stored in the batch's own transaction ---------------------


def test_a_batch_replay_with_a_charset_suffix_or_reordered_keys_is_the_same_batch(as_user, ingest_user, db):
    reference_data()
    client = as_user(ingest_user)
    url = "/api/v1/observations/batch/"
    body = json.dumps({"observations": [row(i) for i in range(3)]})
    first = post_raw(client, url, body, **KEY)
    assert first.status_code == 201, first.json()
    same_rows_reordered = json.dumps(
        {"observations": [dict(reversed(r.items())) for r in json.loads(body)["observations"]]}, indent=1
    )
    for replay_body, content_type in (
        (body, "application/json; charset=utf-8"),
        (same_rows_reordered, "application/json"),
    ):
        replay = post_raw(client, url, replay_body, content_type, **KEY)
        assert replay.status_code == 201, replay.json()
        assert replay.json() == first.json()
        assert replay["Idempotent-Replay"] == "true"
    assert IngestBatch.objects.count() == 1
    assert Observation.objects.count() == 3
    other = post_raw(client, url, json.dumps({"observations": [row(i) for i in range(4)]}), **KEY)
    assert other.status_code == 422
    assert other.json()["errors"][0]["field"] == "Idempotency-Key"


def test_every_create_and_decision_documents_the_header():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    undocumented = [
        path
        for path, operations in schema["paths"].items()
        if "post" in operations
        # Both answer a new token's secret, which a stored answer would keep in clear (core/api/tokens.py).
        and path not in {"/api/v1/auth/token/", "/api/v1/tokens/"}
        # Alertmanager sends no such header; its replays are no-ops by the alert's fingerprint and
        # startsAt (incidents/services/alerts.py), which is what a key would have bought.
        and path != "/api/v1/incidents/alertmanager/"
        and not any(p["name"] == "Idempotency-Key" for p in operations["post"].get("parameters", []))
    ]
    assert undocumented == []


def test_answers_older_than_the_retention_are_purged(as_user, lead, settings):
    from datetime import timedelta

    from django.utils import timezone

    from core.idempotency import idempotency_records_purge

    settings.IDEMPOTENCY_RETENTION_HOURS = 24
    now = timezone.now()
    for key, age in (("old", 25), ("young", 23)):
        record = IdempotencyRecord.objects.create(
            user=lead, scope="POST x", key=key, request_hash="h", response_status=201, response_body={}
        )
        IdempotencyRecord.objects.filter(pk=record.pk).update(created_at=now - timedelta(hours=age))
    assert idempotency_records_purge(now=now) == 1
    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["young"]


def test_the_purge_runs_on_the_beat_schedule(settings):
    assert settings.CELERY_BEAT_SCHEDULE["idempotency-records-purge"]["task"] == (
        "core.tasks.idempotency_records_purge"
    )


def test_every_scheduled_task_is_a_registered_task(settings):
    """A typo in a beat entry would only show as an error in beat's log; here it fails."""
    from config.celery import app

    app.loader.import_default_modules()
    missing = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()} - set(app.tasks)
    assert missing == set()
