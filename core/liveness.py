"""Liveness of the worker and beat processes, for a supervisor (a Kubernetes exec probe, a compose
healthcheck): each touches a file of its own while it runs, and `manage.py liveness worker|beat` says
whether that file is fresh.

Unlike `celery inspect ping` this needs no broker and no database: a Redis outage must not restart
every worker, which reconnects by itself. What it proves: the worker's process is up and its main
thread alive (a thread of the worker touches the file every LIVENESS_SECONDS while the worker runs; a
worker that stopped, for an unrecoverable error or anything else, stops touching it), and beat's
scheduler loop still turns (it touches the file at each tick, at least every
CELERY_BEAT_MAX_LOOP_INTERVAL). Each container, or each `make run`, has one worker and one beat per
LIVENESS_DIR.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from celery import bootsteps
from celery.beat import PersistentScheduler
from django.conf import settings

WORKER = "worker"
BEAT = "beat"


def liveness_file(kind: str) -> Path:
    return Path(settings.LIVENESS_DIR) / kind


def liveness_touch(kind: str) -> None:
    path = liveness_file(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()


def liveness_age(kind: str) -> float | None:
    """Seconds since the process last touched its file; None if it never has."""
    try:
        return time.time() - liveness_file(kind).stat().st_mtime
    except FileNotFoundError:
        return None


# Celery ships no type information: its bases are Any to mypy.
class WorkerLiveness(bootsteps.StartStopStep):  # type: ignore[misc]
    """A worker bootstep (config/celery.py): a thread touches the worker's file while the worker runs."""

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self._stop = threading.Event()

    def start(self, worker: Any) -> None:
        liveness_touch(WORKER)
        threading.Thread(target=self._keep, name="liveness", daemon=True).start()

    def stop(self, worker: Any) -> None:
        self._stop.set()

    def _keep(self) -> None:
        main = threading.main_thread()
        while not self._stop.wait(settings.LIVENESS_SECONDS) and main.is_alive():
            liveness_touch(WORKER)


class LivenessScheduler(PersistentScheduler):  # type: ignore[misc]
    """Beat's scheduler (CELERY_BEAT_SCHEDULER), touching beat's file at each tick of its loop."""

    def tick(self, *args: Any, **kwargs: Any) -> float:
        liveness_touch(BEAT)
        return float(super().tick(*args, **kwargs))
