"""Background work when the broker fails, measured with real `celery worker` and `celery beat` processes
on a Redis server the test starts, stops and restarts (tests/core/faults/harness.py).

Each test repeats one measurement of issue 9 and asserts what the outbox and the sweep guarantee: a
write never fails because Redis is down, and no follow-up is lost with Redis's queue. Figures are
printed (run with -s to see them)."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from django.db import transaction

from core.models import Delivery, OutboxMessage, WebhookEndpoint
from core.notifications import notification_send
from freeze.models import FreezeWindow
from program.models import Evaluation, Gate
from tests.conftest import wait_for
from tests.core.faults.harness import SECRET, all_done, ingest_rows, webhook_ids
from tests.program.factories import make_program, metrics_for_template

pytestmark = pytest.mark.services


def test_redis_down_during_writes_answers_no_5xx_and_loses_no_follow_up(
    faults, receiver, lead, ingest_user, as_user
):
    redis, processes = faults
    WebhookEndpoint.objects.create(name="dashboard", url=receiver.url, secret=SECRET)
    metrics_for_template()
    make_program(lead)
    processes.worker()
    processes.beat()
    assert wait_for(all_done, timeout=60)
    canary = Gate.objects.get(phase__kind="canary", kind="exit")
    assert not Evaluation.objects.filter(gate=canary).exists()
    gates = list(Gate.objects.filter(status__in=Gate.UNDECIDED).exclude(pk=canary.pk).order_by("pk")[:2])

    redis.stop()
    down_at = time.monotonic()
    answers, slowest = [], 0.0
    writes = [
        (
            lead,
            "/api/v1/programs/",
            {
                "slug": f"p{i}",
                "name": f"P{i}",
                "start_date": "2026-01-01",
                "baseline_system": "legacy",
                "candidate_system": "rebuilt",
            },
        )
        for i in range(2)
    ] + [
        (ingest_user, "/api/v1/observations/batch/", {"observations": ingest_rows(f"b{i}")}) for i in range(2)
    ]
    writes += [
        (lead, f"/api/v1/gates/{gate.pk}/decision/", {"decision": "waive", "note": "outage"})
        for gate in gates
    ]
    for user, url, body in writes:
        started = time.monotonic()
        answers.append(as_user(user).post(url, body, format="json").status_code)
        slowest = max(slowest, time.monotonic() - started)
    assert all(200 <= status < 300 for status in answers), answers
    waiting = OutboxMessage.objects.filter(done_at__isnull=True).count()
    assert waiting >= len(writes)  # every follow-up is on record, none was lost
    time.sleep(2)
    redis.start()
    outage = time.monotonic() - down_at
    back_at = time.monotonic()

    def followed_up():
        windows = FreezeWindow.objects.filter(program__slug__in=["p0", "p1"]).count() == 2
        delivered = not Delivery.objects.exclude(status=Delivery.Status.DELIVERED).exists()
        return windows and delivered and all_done()

    assert wait_for(followed_up, timeout=120), list(OutboxMessage.objects.filter(done_at__isnull=True))
    recovered = time.monotonic() - back_at
    assert Evaluation.objects.filter(gate=canary).exists()  # the ingest batches' evaluation ran
    assert set(receiver.ids) == webhook_ids()
    print(
        f"\nRedis down for {outage:.1f} s: {len(writes)} writes, 0 5xx (slowest {slowest:.2f} s), "
        f"{waiting} follow-ups kept; all done {recovered:.1f} s after Redis returned"
    )


def test_redis_restart_without_persistence_loses_no_queued_task(faults, receiver):
    redis, processes = faults
    WebhookEndpoint.objects.create(name="dashboard", url=receiver.url, secret=SECRET)
    queued = 20
    with transaction.atomic():
        for i in range(queued):
            notification_send(event="gate.ready", subject=f"queued {i}", body="b")
    assert OutboxMessage.objects.filter(sent_at__isnull=False).count() == queued  # in Redis only
    redis.stop()
    redis.start()  # no persistence: the 20 messages are gone
    processes.worker()
    processes.beat()
    up_at = time.monotonic()
    assert wait_for(all_done, timeout=60)
    recovered = time.monotonic() - up_at
    assert Counter(receiver.ids) == Counter(webhook_ids())  # each exactly once
    print(
        f"\nRedis restart without persistence: {queued} of {queued} queued tasks done "
        f"{recovered:.1f} s after the worker and beat were up"
    )
