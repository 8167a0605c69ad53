"""Notifications through the real Redis broker and a real Celery worker."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from celery.signals import task_postrun
from django.core import mail
from django.db import transaction
from django.test import override_settings
from standardwebhooks.webhooks import Webhook

from core.models import Delivery, WebhookEndpoint
from core.notifications import notification_send
from core.tasks import notification_deliver
from tests.conftest import wait_for

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


class FlakyReceiver:
    """A local webhook receiver that answers 500 to the first `failures` requests, then 204."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.requests: list[tuple[dict, bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["content-length"]))
                receiver.requests.append((dict(self.headers), body))
                failing = len(receiver.requests) <= receiver.failures
                self.send_response(500 if failing else 204)
                self.end_headers()

            def log_message(self, *args):
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@contextmanager
def worker_runs() -> Iterator[dict[str, tuple[str, object]]]:
    """The worker's own account of the tasks it finishes meanwhile: task id -> (state, return value).
    The test worker runs in a thread of this process, so its task_postrun signal is seen here."""
    finished: dict[str, tuple[str, object]] = {}

    def record(task_id=None, state=None, retval=None, **kwargs):
        finished[task_id] = (state, retval)

    task_postrun.connect(record, weak=False)
    try:
        yield finished
    finally:
        task_postrun.disconnect(record)


@pytest.fixture
def receiver():
    receiver = FlakyReceiver(failures=1)
    yield receiver
    receiver.close()


@pytest.mark.services
def test_worker_executes_a_task_through_redis(celery_worker_real):
    with transaction.atomic():
        notification = notification_send(
            event="gate.ready", subject="Gate ready", body="Review it.", recipients=["lead@example.com"]
        )
    delivery = Delivery.objects.get(notification=notification)
    assert wait_for(lambda: Delivery.objects.get(id=delivery.id).status == Delivery.Status.DELIVERED)
    assert [m.to for m in mail.outbox] == [["lead@example.com"]]
    assert mail.outbox[0].subject == "[Rebuild Tracker] Gate ready"


@pytest.mark.services
@override_settings(SITE_URL="https://tracker.example.com")
def test_failing_webhook_is_retried_with_backoff_then_delivered_once(celery_worker_real, receiver):
    WebhookEndpoint.objects.create(name="dashboard", url=receiver.url, secret=SECRET)
    with transaction.atomic():
        notification = notification_send(
            event="gate.decided",
            subject="Gate 'cutover exit' passed",
            body="Decided by lead.",
            link="/programs/gates/7/",
            payload={"gate": 7},
            recipients=["lead@example.com"],
        )
    webhook = Delivery.objects.get(notification=notification, channel=Delivery.Channel.WEBHOOK)
    assert wait_for(lambda: Delivery.objects.get(id=webhook.id).status == Delivery.Status.DELIVERED)

    webhook.refresh_from_db()
    assert webhook.attempts == 2
    assert len(receiver.requests) == 2
    first_headers, body = receiver.requests[1]
    assert first_headers["webhook-id"] == receiver.requests[0][0]["webhook-id"]
    # The receiver can verify the signature with the shared secret.
    Webhook(SECRET).verify(body, {k.lower(): v for k, v in first_headers.items()})
    # It carries the link to the object, absolute, beside the event's data.
    sent = json.loads(body)
    assert sent["link"] == "https://tracker.example.com/programs/gates/7/"
    assert sent["data"] == {"gate": 7} and sent["type"] == "gate.decided"

    email = Delivery.objects.get(notification=notification, channel=Delivery.Channel.EMAIL)
    assert wait_for(lambda: Delivery.objects.get(id=email.id).status == Delivery.Status.DELIVERED)
    assert mail.outbox[0].body == "Decided by lead.\n\nhttps://tracker.example.com/programs/gates/7/"

    # A redelivered message (the broker handing the same task out again) sends nothing more. Waiting for
    # the worker to report both runs finished is what makes the counts below mean something.
    with worker_runs() as finished:
        redelivered = [notification_deliver.delay(str(delivery.id)).id for delivery in (webhook, email)]
        assert wait_for(lambda: all(task_id in finished for task_id in redelivered))
    assert [finished[task_id] for task_id in redelivered] == [("SUCCESS", False)] * 2  # False: sent already
    assert len(receiver.requests) == 2
    assert len(mail.outbox) == 1
    assert Delivery.objects.get(id=webhook.id).attempts == 2
    assert Delivery.objects.get(id=email.id).attempts == 1


@pytest.mark.django_db
def test_deliveries_wait_for_the_commit(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        notification_send(event="gate.ready", subject="Gate ready", body="b", recipients=["a@example.com"])
    assert len(callbacks) == 1
    assert mail.outbox == []
