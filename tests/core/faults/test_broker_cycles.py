"""A busy worker through 20 Redis SIGKILL/restart cycles (issue 28, item 1): it must stay up, and
afterwards every webhook has been delivered exactly once per webhook-id and every queued evaluation is
stored. Real `celery worker` and `celery beat`, a real Redis the harness kills (tests/core/faults/)."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from django.db import transaction

from core.models import Delivery, OutboxMessage, WebhookEndpoint
from core.notifications import notification_send
from program.models import Evaluation
from program.services import gates_evaluate_for_definitions
from tests.conftest import wait_for
from tests.core.faults.harness import SECRET, all_done, ingest_rows, webhook_ids
from tests.program.factories import make_program, metrics_for_template

pytestmark = pytest.mark.services

CYCLES = 20
NOTIFICATIONS_PER_CYCLE = 3
# Redis stays down 1 s (the worker's first reconnect, 2 s later, finds it back) or 3 s, as in the issue's
# repro (that reconnect is refused and the next one, 4 s later, succeeds).
DOWN_SECONDS = (1, 3)


def test_a_busy_worker_survives_20_redis_kills_and_does_all_its_work_once(
    faults, receiver, lead, ingest_user, as_user
):
    redis, processes = faults
    WebhookEndpoint.objects.create(name="dashboard", url=receiver.url, secret=SECRET)
    metrics_for_template()
    make_program(lead)
    worker = processes.worker(as_deployed=True)  # with mingle and gossip, as the Procfile runs it
    processes.beat()
    started = time.monotonic()
    queued_evaluations = 0
    for cycle in range(CYCLES):
        response = as_user(ingest_user).post(
            "/api/v1/observations/batch/", {"observations": ingest_rows(f"c{cycle}")}, format="json"
        )
        assert response.status_code == 201
        with transaction.atomic():
            for i in range(NOTIFICATIONS_PER_CYCLE):
                notification_send(event="gate.ready", subject=f"cycle {cycle}.{i}", body="b")
            queued_evaluations += gates_evaluate_for_definitions()
        # Kill Redis while the worker is mid-delivery: the receiver holds each request for 0.3 s.
        before = len(receiver.ids)
        wait_for(lambda before=before: len(receiver.ids) > before, timeout=5)
        redis.stop()
        time.sleep(DOWN_SECONDS[cycle % 2])
        redis.start()
        assert worker.poll() is None, processes.logs[worker.pid].read_text()[-3000:]

    def finished():
        return all_done() and len(receiver.ids) >= len(webhook_ids())

    assert wait_for(finished, timeout=120), list(OutboxMessage.objects.filter(done_at__isnull=True))
    took = time.monotonic() - started
    log = processes.logs[worker.pid].read_text()
    assert worker.poll() is None and "Unrecoverable error" not in log, log[-3000:]
    counts = Counter(receiver.ids)
    assert set(counts) == webhook_ids()
    # Every notice the test sent arrived; the gate evaluations may add their own ("ready for review")
    # depending on how the batches and kills interleave, so those are counted by the set above only.
    sent_here = Delivery.objects.filter(
        channel=Delivery.Channel.WEBHOOK, notification__subject__startswith="cycle "
    ).values_list("id", flat=True)
    assert len(sent_here) == CYCLES * NOTIFICATIONS_PER_CYCLE
    assert {f"msg_{pk.hex}" for pk in sent_here} <= set(counts)
    assert max(counts.values()) == 1, [key for key, n in counts.items() if n > 1]
    evaluations = OutboxMessage.objects.filter(task="program.tasks.gate_evaluate")
    assert queued_evaluations > 0
    assert not evaluations.exclude(last_error="").exists(), list(evaluations.exclude(last_error=""))
    evaluated = set(Evaluation.objects.values_list("gate_id", flat=True))
    assert {int(args[0]) for args in evaluations.values_list("args", flat=True)} <= evaluated
    print(
        f"\n{CYCLES} Redis kills with a busy worker: {len(counts)} webhooks each delivered once, "
        f"{evaluations.count()} evaluation messages finished, worker up throughout; {took:.1f} s"
    )
