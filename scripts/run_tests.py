"""`make test`: pytest with everything the suite needs, so nothing is skipped on a fresh clone.

Without CELERY_BROKER_URL an embedded Redis (embedded_redis.py) is started on a free port for the run's
duration and stopped at the end, as `make run` does: the real-worker and shared-cache tests then run
instead of skipping. The suite runs on every core (pytest-xdist, `-n auto`, a test database per worker,
tests handed out one by one) unless the arguments choose (`-n 0` runs it in one process).
DATABASE_URL must be set (the Makefile does it). Arguments go to pytest.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from embedded_redis import redis_start, redis_stop

ROOT = Path(__file__).resolve().parent.parent


def parallel_unless_chosen(args: list[str]) -> list[str]:
    """`-n auto` first, unless the caller said how to run (-n, --numprocesses, no:xdist). Tests go to
    the workers one by one in pytest-django's order, so each worker runs its transactional tests (whose
    flush empties the tables, migrations' rows included) after the others, as one process would."""
    chosen = any(a.startswith(("-n", "--numprocesses", "--dist")) or a == "no:xdist" for a in args)
    return args if chosen else ["-n", "auto", "--dist", "load", *args]


def main() -> int:
    if not os.environ.get("DATABASE_URL"):
        sys.exit("Set DATABASE_URL (make test starts the embedded PostgreSQL and sets it).")
    env = dict(os.environ)
    redis_process = None
    redis_dir = None
    if not env.get("CELERY_BROKER_URL"):
        redis_dir = Path(tempfile.mkdtemp(prefix="rebuild-tracker-test-redis-"))
        redis_process, redis_url = redis_start(redis_dir, persistent=False)
        env["CELERY_BROKER_URL"] = f"{redis_url}/0"
        print(f"Embedded Redis for the tests at {redis_url}", flush=True)
    # Ctrl-C reaches pytest directly (same process group); we only wait for it, then stop the Redis.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        command = [sys.executable, "-m", "pytest", *parallel_unless_chosen(sys.argv[1:])]
        return subprocess.run(command, cwd=ROOT, env=env).returncode
    finally:
        if redis_process is not None:
            redis_stop(redis_process)
        if redis_dir is not None:
            shutil.rmtree(redis_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
