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
