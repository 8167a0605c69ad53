"""`manage.py liveness worker|beat` (core/liveness.py) against a real worker and beat: alive while they
run, also through a Redis outage (a probe must not restart workers that reconnect by themselves), and
not alive within seconds of either being killed."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.conftest import wait_for
from tests.core.faults.harness import ROOT

pytestmark = pytest.mark.services
MAX_AGE = 3


def test_liveness_follows_the_worker_and_beat_not_the_broker(faults, tmp_path):
    redis, processes = faults
    processes.env.update(LIVENESS_DIR=str(tmp_path / "alive"), LIVENESS_SECONDS="1")

    def alive(kind: str) -> bool:
        probe = subprocess.run(
            [sys.executable, "manage.py", "liveness", kind, "--max-age", str(MAX_AGE)],
            cwd=ROOT,
            env=processes.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert probe.returncode in (0, 1), probe.stderr
        return probe.returncode == 0

    assert not alive("worker") and not alive("beat")  # never started
    worker = processes.worker()
    beat = processes.beat()
    assert wait_for(lambda: alive("worker") and alive("beat"), timeout=30)

    redis.stop()
    time.sleep(MAX_AGE + 1)
    assert alive("worker")  # reconnecting, not dead
    redis.start()

    processes.kill(worker)
    killed_at = time.monotonic()
    assert wait_for(lambda: not alive("worker"), timeout=MAX_AGE + 10)
    noticed = time.monotonic() - killed_at
    assert alive("beat")
    processes.kill(beat)
    assert wait_for(lambda: not alive("beat"), timeout=MAX_AGE + 10)
    print(f"\nworker SIGKILLed: `liveness worker` failed {noticed:.1f} s later (--max-age {MAX_AGE})")
