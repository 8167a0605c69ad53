"""The log formats: JSON lines for production, readable lines elsewhere, a traceback printed plainly."""

from __future__ import annotations

import json
import logging
import sys

import pytest
from django.conf import settings

from core.telemetry.logs import logging_config
from tests.core.test_settings_and_health import run_with_production_settings


def formatter(fmt: str) -> logging.Formatter:
    options = dict(logging_config(fmt=fmt, level="INFO")["formatters"]["structured"])
    factory = options.pop("()")
    try:
        return factory(**options)
    finally:
        logging_config(fmt=settings.LOG_FORMAT, level=settings.LOG_LEVEL)  # as the test settings had it


def failed_record() -> logging.LogRecord:
    try:
        raise ZeroDivisionError("boom")
    except ZeroDivisionError:
        return logging.LogRecord("tests.logs", logging.ERROR, __file__, 1, "it failed", None, sys.exc_info())


def test_console_lines_are_readable_and_print_a_traceback_without_locals():
    line = formatter("console").format(failed_record())
    assert "it failed" in line and "[tests.logs]" in line
    assert "Traceback (most recent call last)" in line and "ZeroDivisionError: boom" in line
    # Not rich's boxed traceback with every frame's locals (seconds per 5xx under load).
    assert "╭" not in line and "locals" not in line


def test_json_lines_carry_the_traceback_as_a_field():
    record = json.loads(formatter("json").format(failed_record()))
    assert record["event"] == "it failed" and record["level"] == "error" and record["logger"] == "tests.logs"
    assert "ZeroDivisionError: boom" in record["exception"]


@pytest.mark.parametrize(("value", "fails"), [("console", False), ("xml", True)])
def test_production_logs_json_unless_told_and_refuses_an_unknown_format(value, fails):
    script = "from config.settings import production as s; print(s.LOG_FORMAT)"
    assert run_with_production_settings("-c", script).stdout.strip() == "json"
    result = run_with_production_settings("-c", script, LOG_FORMAT=value)
    assert (result.returncode != 0) == fails, result.stderr
    if fails:
        assert "LOG_FORMAT must be one of json, console" in result.stderr


def test_console_logs_leave_out_routine_tasks_info_lines_and_keep_the_rest(capsys):
    """`make run`'s readable logs: the 5-s outbox sweep's lines go, its warnings and other tasks stay."""
    import logging.config

    import structlog

    logging.config.dictConfig(logging_config(fmt="console", level="INFO"))
    try:
        receivers = structlog.get_logger("django_structlog.celery.receivers")
        logging.getLogger("celery.beat").info(
            "Scheduler: Sending due task outbox-sweep (core.tasks.outbox_sweep)"
        )
        receivers.info("task_enqueued", child_task_id="a1", child_task_name="core.tasks.outbox_sweep")
        logging.getLogger("celery.worker.strategy").info(
            "Task core.tasks.outbox_sweep[a1] received",
            extra={"data": {"id": "a1", "name": "core.tasks.outbox_sweep"}},
        )
        structlog.contextvars.bind_contextvars(task_id="a1")
        receivers.info("task_started", task="core.tasks.outbox_sweep")
        receivers.info("task_succeeded", duration_ms=3)  # only the id says whose
        receivers.warning("sweep_slow", seconds=9)
        structlog.contextvars.bind_contextvars(task_id="b2")
        receivers.info("task_started", task="program.tasks.gate_evaluate")
        receivers.info("task_succeeded", duration_ms=5)
    finally:
        structlog.contextvars.clear_contextvars()
        logging.config.dictConfig(settings.LOGGING)
    lines = capsys.readouterr().err.splitlines()
    assert [line for line in lines if "a1" in line or "outbox_sweep" in line] == [
        next(line for line in lines if "sweep_slow" in line)
    ]
    assert sum("task_id=b2" in line for line in lines) == 2
    assert "gate_evaluate" in "\n".join(lines)


def test_json_logs_keep_routine_tasks_lines():
    handler = logging_config(fmt="json", level="INFO")["handlers"]["console"]
    logging_config(fmt=settings.LOG_FORMAT, level=settings.LOG_LEVEL)
    assert handler["filters"] == ["client_errors_without_traceback"]
