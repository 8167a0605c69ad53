"""Filters of the logging configuration (config/settings/base.py LOGGING)."""

from __future__ import annotations

import logging


class ClientErrorsWithoutTraceback(logging.Filter):
    """A refused or missing page (4xx) is the client's mistake, not the server's: Django logs it with the
    exception that produced it (PermissionDenied, Http404, SuspiciousOperation), and its traceback would
    bury the server errors in the web log. The one-line message stays; 5xx keep their tracebacks."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True


# The beat's every-few-seconds housekeeping (config/settings/base.py CELERY_BEAT_SCHEDULE): in readable
# development logs its five lines per run (enqueued, received, started, succeeded twice) every 5 s buried
# everything else `make run` prints. JSON logs keep them: a collector filters, a person cannot.
ROUTINE_TASKS = frozenset({"core.tasks.outbox_sweep", "core.tasks.heartbeat_record"})


class QuietRoutineTasks(logging.Filter):
    """Drops the info-level lines of ROUTINE_TASKS' runs (console format only); warnings and errors of
    the same tasks still show. A run's last lines carry only its task id, so the ids seen with a routine
    task's name are remembered (per process, the last few hundred)."""

    def __init__(self) -> None:
        super().__init__()
        self.routine_ids: dict[str, None] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.INFO:
            return True
        event = record.msg if isinstance(record.msg, dict) else {}
        name = event.get("child_task_name") or event.get("task")
        task_id = event.get("child_task_id") or event.get("task_id")
        data = getattr(record, "data", None)  # celery's own records: {"id", "name", …}
        if isinstance(data, dict):
            name, task_id = name or data.get("name"), task_id or data.get("id")
        if not event and any(f"({task})" in record.getMessage() for task in ROUTINE_TASKS):
            return False  # celery.beat's "Sending due task outbox-sweep (core.tasks.outbox_sweep)"
        if name in ROUTINE_TASKS:
            if task_id:
                self.routine_ids[str(task_id)] = None
                while len(self.routine_ids) > 500:
                    del self.routine_ids[next(iter(self.routine_ids))]
            return False
        return not (task_id and str(task_id) in self.routine_ids)
