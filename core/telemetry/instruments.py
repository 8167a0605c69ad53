"""Every series the tracker records about itself, defined once; callers import and increment them.

In multi-process mode (PROMETHEUS_MULTIPROC_DIR set before start-up, for gunicorn and Celery workers)
prometheus_client writes each value to a file in that directory and /metrics sums the files.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

REQUEST_LATENCY = Histogram(
    "rebuild_http_request_duration_seconds",
    "Time to answer a request, by view (the URL name), method and status class.",
    ["view", "method", "status"],
)
INGEST_ROWS = Counter(
    "rebuild_ingest_rows",
    "Observation rows received by ingest: accepted (stored or duplicate) or rejected (invalid).",
    ["outcome"],
)
GATE_EVALUATION = Histogram(
    "rebuild_gate_evaluation_duration_seconds",
    "Time to evaluate one gate (every criterion, or the reuse of an unchanged evaluation).",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
TASK_EVENTS = Counter(
    "rebuild_celery_tasks",
    "Celery task runs by task name and outcome (success, failure, retry).",
    ["task", "outcome"],
)
FREEZE_CHECKS = Counter(
    "rebuild_freeze_checks",
    "Freeze-check answers by decision (allowed, needs_approval, forbidden).",
    ["decision"],
)
