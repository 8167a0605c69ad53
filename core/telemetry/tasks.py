"""Celery task runs, failures and retries, counted from Celery's signals (connected in CoreConfig.ready)."""

from __future__ import annotations

from typing import Any

from celery.signals import task_failure, task_retry, task_success

from core.telemetry.instruments import TASK_EVENTS


def _name(sender: object) -> str:
    return getattr(sender, "name", None) or str(sender)


def _on_success(sender: object = None, **_kwargs: Any) -> None:
    TASK_EVENTS.labels(task=_name(sender), outcome="success").inc()


def _on_failure(sender: object = None, **_kwargs: Any) -> None:
    TASK_EVENTS.labels(task=_name(sender), outcome="failure").inc()


def _on_retry(sender: object = None, request: object = None, **_kwargs: Any) -> None:
    # task_retry's sender is the task's request... in some versions the task itself: both have a name.
    task = getattr(request, "task", None) or _name(sender)
    TASK_EVENTS.labels(task=task, outcome="retry").inc()


def connect() -> None:
    task_success.connect(_on_success, dispatch_uid="telemetry.task_success", weak=False)
    task_failure.connect(_on_failure, dispatch_uid="telemetry.task_failure", weak=False)
    task_retry.connect(_on_retry, dispatch_uid="telemetry.task_retry", weak=False)
