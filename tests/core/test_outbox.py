"""The transactional outbox, one step at a time (the real-worker fault tests are in tests/core/faults/)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from config.celery import app
from core.leases import kept_renewed, lease_length
from core.models import Delivery, OutboxMessage
from core.notifications import DeliveryBusy, delivery_attempt, notification_send
from core.outbox import outbox_add, outbox_claim, outbox_publish, outbox_renew, outbox_sweep
from program.models import Evaluation, Gate
from program.services import gate_evaluation_queue, gates_evaluate_for_definitions
from tests.program.factories import make_program, metrics_for_template

pytestmark = pytest.mark.django_db
LEASE = timedelta(seconds=60)


@pytest.fixture
def broker_down(monkeypatch):
    """Publishing goes to a Redis port nothing listens on (not eager), as during an outage."""
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)  # Celery prefers it to app.conf
    previous = app.conf.task_always_eager, app.conf.broker_url
    app.conf.task_always_eager = False
    app.conf.broker_url = "redis://127.0.0.1:1/0"
    app._after_fork()  # forget pooled connections to the previous broker
    yield
    app.conf.task_always_eager, app.conf.broker_url = previous
    app._after_fork()


def test_message_is_written_in_the_transaction_and_published_after_commit(
    django_capture_on_commit_callbacks, mailoutbox
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        notification_send(event="gate.ready", subject="Gate ready", body="b", recipients=["a@example.com"])
    message = OutboxMessage.objects.get()
    assert message.task == "core.tasks.notification_deliver"
    assert message.sent_at is None and mailoutbox == []
    callbacks[0]()  # the commit: without a broker the task runs in-process
    message.refresh_from_db()
    assert message.done_at is not None and message.sent_at is not None
    assert Delivery.objects.get().status == Delivery.Status.DELIVERED
    assert len(mailoutbox) == 1


def test_a_rolled_back_change_leaves_no_message():
    with pytest.raises(RuntimeError), transaction.atomic():
        outbox_add(task="freeze.tasks.frontier_window_create", args=[1])
        raise RuntimeError
    assert not OutboxMessage.objects.exists()


def test_broker_down_at_commit_keeps_the_message_for_the_sweep(broker_down):
    message_id = OutboxMessage.objects.create(task="freeze.tasks.frontier_window_create", args=[1]).pk
    assert outbox_publish(message_ids=[message_id]) == 0  # no exception reaches the request
    message = OutboxMessage.objects.get(pk=message_id)
    assert message.sent_at is None and message.done_at is None
    # The sweep picks it up once it is older than the after-commit publish window.
    later = timezone.now() + timedelta(seconds=10)
    assert outbox_sweep(now=later) == 0  # still down: still kept
    assert OutboxMessage.objects.get(pk=message_id).done_at is None


def test_sweep_resends_unfinished_messages_and_skips_fresh_leased_and_done(settings):
    settings.OUTBOX_RESEND_AFTER = 60
    now = timezone.now()
    old = now - timedelta(seconds=120)
    make = OutboxMessage.objects.create
    lost = make(task="freeze.tasks.frontier_window_create", args=[10**6], sent_at=old, send_count=1)
    recent = make(task="freeze.tasks.frontier_window_create", args=[10**6], sent_at=now, send_count=1)
    leased = make(
        task="freeze.tasks.frontier_window_create", args=[10**6], sent_at=old, lease_until=now + LEASE
    )
    dead = make(task="freeze.tasks.frontier_window_create", args=[10**6], sent_at=old, lease_until=old)
    done = make(task="freeze.tasks.frontier_window_create", args=[10**6], sent_at=old, done_at=old)
    assert outbox_sweep(now=now) == 2  # eager here: sent means run
    finished = set(OutboxMessage.objects.filter(done_at__isnull=False).values_list("pk", flat=True))
    assert finished == {lost.pk, dead.pk, done.pk}
    assert {recent.pk, leased.pk}.isdisjoint(finished)


def test_resends_of_a_message_still_unfinished_back_off(settings):
    settings.OUTBOX_RESEND_AFTER = 20
    now = timezone.now()
    make = OutboxMessage.objects.create
    ago = lambda seconds: now - timedelta(seconds=seconds)  # noqa: E731
    # (send_count, seconds since the last send): due once past 20 s × 2**(sends-1), at most × 16.
    due = [
        make(task="freeze.tasks.frontier_window_create", args=[10**6], send_count=n, sent_at=ago(s))
        for n, s in ((1, 21), (2, 41), (3, 81), (9, 321))
    ]
    not_yet = [
        make(task="freeze.tasks.frontier_window_create", args=[10**6], send_count=n, sent_at=ago(s))
        for n, s in ((1, 19), (2, 39), (3, 79), (9, 319))
    ]
    assert outbox_sweep(now=now) == len(due)
    finished = set(OutboxMessage.objects.filter(done_at__isnull=False).values_list("pk", flat=True))
    assert finished == {message.pk for message in due}
    assert finished.isdisjoint(message.pk for message in not_yet)


@pytest.mark.django_db(transaction=True)  # the renewing thread has a connection of its own
def test_a_running_task_renews_its_claim_and_a_dead_ones_lapses(settings):
    settings.OUTBOX_LEASE_SECONDS = 1
    message = OutboxMessage.objects.create(task="core.tasks.outbox_sweep")
    assert outbox_claim(message_id=message.pk, owner="task-1", lease=lease_length())
    with kept_renewed(lambda: outbox_renew(message_id=message.pk, owner="task-1")):
        time.sleep(2.5)  # more than twice the lease: only the renewals keep it
        assert not outbox_claim(message_id=message.pk, owner="task-2", lease=lease_length())
    time.sleep(1.1)  # no one renews it now, as with a killed worker
    assert outbox_claim(message_id=message.pk, owner="task-2", lease=lease_length())


def test_live_lease_is_respected_and_expired_lease_taken_over():
    message = OutboxMessage.objects.create(task="core.tasks.outbox_sweep")
    assert outbox_claim(message_id=message.pk, owner="task-1", lease=LEASE)
    assert not outbox_claim(message_id=message.pk, owner="task-2", lease=LEASE)
    # A retry of the same task keeps its own lease.
    assert outbox_claim(message_id=message.pk, owner="task-1", lease=LEASE)
    OutboxMessage.objects.filter(pk=message.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert outbox_claim(message_id=message.pk, owner="task-2", lease=LEASE)


def test_finished_message_is_not_run_again(mailoutbox):
    with transaction.atomic():
        notification_send(event="gate.ready", subject="s", body="b", recipients=["a@example.com"])
    message = OutboxMessage.objects.get()
    outbox_publish(message_ids=[message.pk])
    assert len(mailoutbox) == 1
    # Even if its delivery looked undone, a finished message published again does nothing.
    Delivery.objects.update(status=Delivery.Status.PENDING)
    message_task = app.tasks["core.tasks.notification_deliver"]
    message_task.apply(args=[str(Delivery.objects.get().pk)], kwargs={"outbox_id": message.pk})
    assert len(mailoutbox) == 1


def test_delivery_with_an_expired_lease_is_taken_over_and_a_live_one_waits(settings):
    settings.OUTBOX_LEASE_SECONDS = 15
    with transaction.atomic():
        notification = notification_send(event="e", subject="s", body="b", recipients=["a@example.com"])
    email = Delivery.objects.get(notification=notification)
    live = timezone.now() - timedelta(seconds=5)
    Delivery.objects.filter(pk=email.pk).update(status=Delivery.Status.SENDING, claimed_at=live)
    with pytest.raises(DeliveryBusy) as busy:
        delivery_attempt(delivery_id=str(email.pk))
    assert 8 <= busy.value.seconds_left <= 10
    expired = timezone.now() - timedelta(seconds=16)
    Delivery.objects.filter(pk=email.pk).update(status=Delivery.Status.SENDING, claimed_at=expired)
    assert delivery_attempt(delivery_id=str(email.pk)) is True
    assert Delivery.objects.get(pk=email.pk).status == Delivery.Status.DELIVERED


def test_one_waiting_evaluation_per_gate(lead):
    metrics_for_template()
    make_program(lead)
    OutboxMessage.objects.all().delete()
    undecided = Gate.objects.filter(status__in=Gate.UNDECIDED).count()
    with transaction.atomic():
        assert gates_evaluate_for_definitions() == undecided
        assert gates_evaluate_for_definitions() == 0  # joined the waiting ones
    assert OutboxMessage.objects.filter(task="program.tasks.gate_evaluate").count() == undecided
    gate = Gate.objects.filter(status__in=Gate.UNDECIDED).first()
    waiting = OutboxMessage.objects.get(key=f"gate-evaluate:{gate.pk}")
    # Once started it has read its inputs: a new request queues a second evaluation.
    assert outbox_claim(message_id=waiting.pk, owner="worker", lease=LEASE)
    assert gate_evaluation_queue(gate_id=gate.pk)
    assert OutboxMessage.objects.filter(key=f"gate-evaluate:{gate.pk}").count() == 2


def test_queued_evaluation_of_a_decided_gate_does_no_work(lead):
    from program.tasks import gate_evaluate

    metrics_for_template()
    make_program(lead)
    gate = Gate.objects.filter(status__in=Gate.UNDECIDED).first()
    Gate.objects.filter(pk=gate.pk).update(status=Gate.Status.WAIVED)
    assert gate_evaluate(gate.pk) is None
    assert not Evaluation.objects.filter(gate=gate).exists()
    Gate.objects.filter(pk=gate.pk).update(status=Gate.Status.OPEN)
    assert gate_evaluate(gate.pk) == Evaluation.objects.get(gate=gate).pk


def test_visibility_timeout_outlasts_every_countdown_and_time_limit(settings):
    from core.tasks import notification_deliver

    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    # A waiting retry is never handed out twice, and a message is only handed out again after
    # its earlier run is surely over (its hard time limit has passed).
    assert visibility > notification_deliver.retry_backoff_max
    assert visibility > max(hard for _, hard in settings.TASK_TIME_LIMITS.values())
    assert settings.CELERY_TASK_ACKS_LATE and settings.CELERY_TASK_REJECT_ON_WORKER_LOST


def test_every_task_has_time_limits_and_notifications_their_own_queue(settings):
    app.loader.import_default_modules()
    ours = {name: task for name, task in app.tasks.items() if name.split(".")[0] in settings.INSTALLED_APPS}
    assert {"core.tasks.notification_deliver", "program.tasks.gate_evaluate"} <= set(ours)
    for name, task in ours.items():
        assert 0 < task.soft_time_limit < task.time_limit, name
    routes = settings.CELERY_TASK_ROUTES
    assert routes["core.tasks.notification_deliver"] == {"queue": "notifications"}
    assert routes["program.tasks.gate_evaluate"] == {"queue": "evaluation"}
    assert routes["metrics.tasks.pull_sources_scrape"] == {"queue": "ingest"}
    # A route naming no task (a typo, a rename) would silently send that task to the default queue.
    assert set(routes) - set(ours) == set()


def _run_failing(monkeypatch, message: OutboxMessage, error: Exception) -> None:
    """Run the message's task through the outbox wrapper with its work raising `error`."""
    task = app.tasks[message.task]

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(task, "run", fail)
    with pytest.raises(type(error)):
        task(*message.args, outbox_id=message.pk)


def test_a_passing_fault_leaves_the_message_for_the_sweep(monkeypatch):
    from django.db import OperationalError

    message = OutboxMessage.objects.create(task="freeze.tasks.frontier_window_create", args=[1])
    _run_failing(monkeypatch, message, OperationalError("connection pool timeout"))
    message.refresh_from_db()
    assert message.done_at is None and message.lease_until is not None  # the lease runs out, then a re-send


def test_a_real_error_finishes_the_message_with_the_error(monkeypatch):
    message = OutboxMessage.objects.create(task="freeze.tasks.frontier_window_create", args=[1])
    _run_failing(monkeypatch, message, ValueError("no such program"))
    message.refresh_from_db()
    assert message.done_at is not None and message.last_error == "ValueError: no such program"


def test_a_message_sent_too_often_is_given_up_and_frees_its_key(lead, caplog):
    from core.outbox import MAX_SENDS

    old = timezone.now() - timedelta(hours=1)
    stuck = OutboxMessage.objects.create(
        task="program.tasks.gate_evaluate",
        args=[10**6],
        key="gate-evaluate:1",
        sent_at=old,
        send_count=MAX_SENDS,
    )
    outbox_sweep()
    stuck.refresh_from_db()
    assert stuck.done_at is not None and stuck.last_error == f"given up after {MAX_SENDS} sends"
    assert "given up" in caplog.text
    # The key is free again: the next change queues a fresh message instead of joining the dead one.
    with transaction.atomic():
        assert outbox_add(task="program.tasks.gate_evaluate", args=[10**6], key="gate-evaluate:1") is not None
