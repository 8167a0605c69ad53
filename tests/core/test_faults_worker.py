"""Background work under faults, measured with real `celery worker` and `celery beat` processes on a
Redis server this test starts and stops (port FAULTS_REDIS_PORT, 6398 by default).

Each test repeats one measurement of issue 9 and asserts what the outbox, the leases and the sweep
guarantee. Figures are printed (run with -s to see them)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.utils import timezone

from config.celery import app
from core import outbox
from core.models import Delivery, OutboxMessage, WebhookEndpoint
from core.notifications import notification_send
from core.outbox import outbox_sweep
from freeze.models import FreezeWindow
from program.models import Evaluation, Gate
from program.services import gates_evaluate_for_definitions
from tests.conftest import subprocess_database_url, wait_for
from tests.program.factories import make_program, metrics_for_template

pytestmark = pytest.mark.services

ROOT = Path(__file__).resolve().parents[2]
REDIS_PORT = int(os.environ.get("FAULTS_REDIS_PORT", "6398"))
BROKER = f"redis://127.0.0.1:{REDIS_PORT}/0"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
# Short limits so an expired lease comes within seconds: notifications 6 s + 1 s margin.
WORKER_ENV = {
    "TASK_SOFT_LIMIT_NOTIFICATIONS": "5",
    "TASK_LIMIT_NOTIFICATIONS": "6",
    "TASK_SOFT_LIMIT_EVALUATION": "25",
    "TASK_LIMIT_EVALUATION": "30",
    "TASK_SOFT_LIMIT_INGEST": "15",
    "TASK_LIMIT_INGEST": "20",
    "TASK_SOFT_LIMIT_DEFAULT": "15",
    "TASK_LIMIT_DEFAULT": "20",
    "OUTBOX_LEASE_MARGIN": "1",
    "OUTBOX_RESEND_AFTER": "3",
    "OUTBOX_SWEEP_SECONDS": "1",
    "NOTIFICATION_RETRY_BACKOFF": "1",
}


class Receiver:
    """A webhook receiver that counts each webhook-id; `delay` keeps requests in flight."""

    def __init__(self, delay: float = 0.0) -> None:
        self.ids: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["content-length"]))
                receiver.ids.append(self.headers["webhook-id"])
                time.sleep(delay)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


class Redis:
    """Our own redis-server without persistence: stopping it loses every queued message."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(REDIS_PORT), "--save", "", "--appendonly", "no"],
            cwd=self.workdir,
            stdout=subprocess.DEVNULL,
        )
        assert wait_for(self._answers, timeout=10), "redis-server did not start"

    def stop(self) -> None:
        if self.process:
            self.process.kill()
            self.process.wait()
            self.process = None

    def _answers(self) -> bool:
        import redis

        try:
            return redis.Redis(port=REDIS_PORT, socket_timeout=0.5).ping()
        except redis.ConnectionError:
            return False


class Processes:
    """`celery worker` and `celery beat` subprocesses on the test database, each in its own session."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.env = {
            **os.environ,
            **WORKER_ENV,
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DJANGO_DEBUG": "false",
            "DATABASE_URL": subprocess_database_url(),
            "CELERY_BROKER_URL": BROKER,
            "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        }
        self.running: list[subprocess.Popen] = []
        self.count = 0

    def _start(self, *args: str) -> tuple[subprocess.Popen, Path]:
        self.count += 1
        log = self.workdir / f"celery-{self.count}.log"
        process = subprocess.Popen(
            [str(ROOT / ".venv/bin/celery"), "-A", "config", *args],
            cwd=ROOT,
            env=self.env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.running.append(process)
        return process, log

    def worker(self, concurrency: int = 2, queues: str = "") -> subprocess.Popen:
        name = f"faults{self.count + 1}@%h"
        options = ["-c", str(concurrency), "-n", name, "--without-mingle", "--without-gossip"]
        process, log = self._start("worker", "-l", "info", *options, *(["-Q", queues] if queues else []))
        assert wait_for(lambda: "ready." in log.read_text(), timeout=60), log.read_text()[-3000:]
        return process

    def beat(self) -> subprocess.Popen:
        schedule = self.workdir / f"beat-{self.count + 1}"
        process, log = self._start("beat", "-l", "info", "-s", str(schedule), "--pidfile=")
        assert wait_for(lambda: "Starting..." in log.read_text(), timeout=60), log.read_text()[-3000:]
        return process

    def kill(self, process: subprocess.Popen) -> None:
        """SIGKILL the process and its pool children: nothing gets to clean up or acknowledge."""
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        self.running.remove(process)

    def stop_all(self) -> None:
        for process in list(self.running):
            self.kill(process)


@pytest.fixture
def faults(transactional_db, tmp_path, settings, monkeypatch):
    """Our Redis, the worker/beat launcher, and this process publishing to that Redis."""
    if not shutil.which("redis-server"):
        if settings.REQUIRE_SERVICES:
            pytest.fail("REQUIRE_SERVICES=1 but redis-server is not installed")
        pytest.skip("the fault tests need redis-server")
    for name, value in WORKER_ENV.items():
        if name.startswith("OUTBOX_"):
            setattr(settings, name, int(value))
    monkeypatch.setattr(outbox, "_paused_until", 0.0)  # no pause left from another test
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)  # Celery prefers it to app.conf
    redis = Redis(tmp_path)
    redis.start()
    processes = Processes(tmp_path)
    previous = app.conf.task_always_eager, app.conf.broker_url
    app.conf.task_always_eager = False
    app.conf.broker_url = BROKER
    app._after_fork()  # forget pooled connections to another broker
    try:
        yield redis, processes
    finally:
        processes.stop_all()
        redis.stop()
        app.conf.task_always_eager, app.conf.broker_url = previous
        app._after_fork()


@pytest.fixture
def receiver():
    receiver = Receiver(delay=0.3)
    yield receiver
    receiver.close()


def _webhook_ids() -> set[str]:
    webhooks = Delivery.objects.filter(channel=Delivery.Channel.WEBHOOK)
    return {f"msg_{pk.hex}" for pk in webhooks.values_list("id", flat=True)}


def _all_done() -> bool:
    return not OutboxMessage.objects.filter(done_at__isnull=True).exists()


def test_sigkill_mid_burst_delivers_every_notification_once_and_stores_every_evaluation(
    faults, receiver, lead
):
    _, processes = faults
    WebhookEndpoint.objects.create(name="dashboard", url=receiver.url, secret=SECRET)
    metrics_for_template()
    make_program(lead)
    worker = processes.worker()
    burst = 20
    with transaction.atomic():
        for i in range(burst):
            notification_send(event="gate.ready", subject=f"burst {i}", body="b", payload={"i": i})
        queued = gates_evaluate_for_definitions()
    gates = set(Gate.objects.filter(status__in=Gate.UNDECIDED).values_list("pk", flat=True))
    assert queued == len(gates) > 0

    assert wait_for(lambda: len(receiver.ids) >= 4, timeout=60)
    processes.kill(worker)  # mid-delivery: the receiver holds requests for 0.3 s
    killed_at = time.monotonic()
    stranded = Delivery.objects.filter(status=Delivery.Status.SENDING).count()
    processes.worker()
    processes.beat()

    def finished():
        delivered = Delivery.objects.filter(status=Delivery.Status.DELIVERED).count() == burst
        return delivered and _all_done()

    assert wait_for(finished, timeout=120), (
        list(OutboxMessage.objects.filter(done_at__isnull=True)),
        list(
            Delivery.objects.exclude(status=Delivery.Status.DELIVERED).values(
                "status", "attempts", "last_error"
            )
        ),
        list(OutboxMessage.objects.exclude(last_error="").values("task", "args", "last_error")),
    )
    recovered = time.monotonic() - killed_at
    counts = Counter(receiver.ids)
    assert set(counts) == _webhook_ids()  # every notification arrived
    duplicates = sum(counts.values()) - len(counts)
    # Only a request in flight at the SIGKILL is sent again (same webhook-id, which the receiver
    # drops per Standard Webhooks): at most one per worker process.
    assert duplicates <= 2
    assert set(Evaluation.objects.values_list("gate_id", flat=True)) == gates
    print(
        f"\nSIGKILL mid-burst of {burst}: {len(counts)} delivered, {stranded} were mid-delivery, "
        f"{duplicates} resent with the same webhook-id; {len(gates)} of {len(gates)} evaluations stored; "
        f"all done {recovered:.1f} s after the kill"
    )


def _ingest_rows(tag: str) -> list[dict]:
    start = timezone.now() - timedelta(hours=3)
    return [
        {
            "metric": metric,
            "system": system,
            "workload": "llm-finetune-8b",
            "value": value * (1 + (i % 7) / 100),
            "observed_at": (start + timedelta(seconds=i)).isoformat(),
            "run_id": f"{tag}-{metric}-{system}-{i}",
        }
        for metric, base, cand in (("training-throughput", 100, 95), ("step-time", 800, 700))
        for system, value in (("legacy", base), ("rebuilt", cand))
        for i in range(20)
    ]


def test_redis_down_during_writes_answers_no_5xx_and_loses_no_follow_up(
    faults, receiver, lead, ingest_user, as_user
):
    redis, processes = faults
    WebhookEndpoint.objects.create(name="dashboard", url=receiver.url, secret=SECRET)
    metrics_for_template()
    make_program(lead)
    processes.worker()
    processes.beat()
    assert wait_for(_all_done, timeout=60)
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
        (ingest_user, "/api/v1/observations/batch/", {"observations": _ingest_rows(f"b{i}")})
        for i in range(2)
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
        return windows and delivered and _all_done()

    assert wait_for(followed_up, timeout=120), list(OutboxMessage.objects.filter(done_at__isnull=True))
    recovered = time.monotonic() - back_at
    assert Evaluation.objects.filter(gate=canary).exists()  # the ingest batches' evaluation ran
    assert set(receiver.ids) == _webhook_ids()
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
    assert wait_for(_all_done, timeout=60)
    recovered = time.monotonic() - up_at
    assert Counter(receiver.ids) == Counter(_webhook_ids())  # each exactly once
    print(
        f"\nRedis restart without persistence: {queued} of {queued} queued tasks done "
        f"{recovered:.1f} s after the worker and beat were up"
    )


def test_two_beats_and_two_sweeps_at_once_send_each_message_once(faults, receiver, settings):
    redis, processes = faults
    # A published message is not re-sent during this test, by this process or the worker.
    settings.OUTBOX_RESEND_AFTER = 600
    processes.env["OUTBOX_RESEND_AFTER"] = "600"
    WebhookEndpoint.objects.create(name="dashboard", url=receiver.url, secret=SECRET)
    count = 30
    redis.stop()  # written while the broker is down: every message waits for a sweep
    with transaction.atomic():
        for i in range(count):
            notification_send(event="gate.ready", subject=f"swept {i}", body="b")
    OutboxMessage.objects.update(created_at=timezone.now() - timedelta(minutes=1))
    redis.start()

    start = threading.Barrier(2)
    published: list[int] = []

    def sweep():
        start.wait()
        published.append(outbox_sweep())
        connection.close()

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(published) == count  # the two sweeps took disjoint rows
    processes.beat()
    processes.beat()
    processes.worker()
    assert wait_for(_all_done, timeout=60)
    time.sleep(3)  # both beats keep sweeping: nothing more is sent
    assert set(OutboxMessage.objects.values_list("send_count", flat=True)) == {1}
    assert Counter(receiver.ids) == Counter(_webhook_ids())  # each delivered exactly once
    print(f"\nTwo sweeps at once published {published} of {count}; two beats: 0 duplicates")


def test_a_notification_does_not_wait_behind_ingest_evaluations(faults, receiver, lead, ingest_user, as_user):
    _, processes = faults
    WebhookEndpoint.objects.create(name="dashboard", url=receiver.url, secret=SECRET)
    metrics_for_template()
    make_program(lead)
    processes.worker(concurrency=1, queues="evaluation,ingest,celery")
    processes.worker(concurrency=1, queues="notifications")
    batches = 10
    for i in range(batches):
        response = as_user(ingest_user).post(
            "/api/v1/observations/batch/", {"observations": _ingest_rows(f"s{i}")}, format="json"
        )
        assert response.status_code == 201
    sent_at = time.monotonic()
    with transaction.atomic():
        notification_send(event="gate.ready", subject="urgent", body="b")
    assert wait_for(lambda: len(receiver.ids) == 1, timeout=30)
    waited = time.monotonic() - sent_at
    assert wait_for(_all_done, timeout=120)
    drained = time.monotonic() - sent_at
    per_gate = Counter(
        OutboxMessage.objects.filter(task="program.tasks.gate_evaluate").values_list("key", flat=True)
    )
    canary = Gate.objects.get(phase__kind="canary", kind="exit")
    assert Evaluation.objects.filter(gate=canary).exists()
    assert max(per_gate.values()) < batches  # requests for a gate that had one waiting joined it
    assert waited < 5
    print(
        f"\nA notification behind {batches} ingest batches: delivered in {waited:.1f} s; the batches' "
        f"follow-ups took {drained:.1f} s, with at most {max(per_gate.values())} evaluations per gate "
        f"(not {batches})"
    )
