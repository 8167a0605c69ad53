"""The logging configuration: structlog in front of the standard library, one line per record.

Every record, ours and the libraries' (Django, Celery, gunicorn), goes through one formatter: JSON lines for
a log collector (production), or aligned, readable lines (development). Either way a record carries the
request id bound for the request or task it belongs to (structlog's context variables, bound by
core.telemetry.request_id and, in a worker, by django-structlog from the task's headers).
"""

from __future__ import annotations

from typing import Any

import structlog

FORMATS = ("json", "console")

# Applied to structlog's own events and to standard-library records alike, before rendering.
_SHARED_PROCESSORS: list[Any] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.stdlib.ExtraAdder(),
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def _renderer(fmt: str) -> Any:
    if fmt == "json":
        return structlog.processors.JSONRenderer()
    # The plain traceback, as the standard library prints it: with rich installed (a dev dependency)
    # structlog would render each one with every frame's locals, which took seconds per 5xx under load.
    return structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)


def logging_config(*, fmt: str, level: str, quiet_routine: bool = True) -> dict[str, Any]:
    """Configure structlog and return the LOGGING dictConfig that renders every record as `fmt`.

    Called from the settings, so the worker, beat and web processes all configure logging the same way.
    """
    if fmt not in FORMATS:
        # Raised from the settings: a misspelt LOG_FORMAT stops the start-up instead of logging nothing.
        raise ValueError(f"LOG_FORMAT must be one of {', '.join(FORMATS)}, not {fmt!r}")
    structlog.configure(
        processors=[
            *_SHARED_PROCESSORS[:2],
            structlog.stdlib.filter_by_level,
            *_SHARED_PROCESSORS[2:],
            structlog.processors.StackInfoRenderer(),
            structlog.processors.UnicodeDecoder(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "client_errors_without_traceback": {"()": "core.log_filters.ClientErrorsWithoutTraceback"},
            "quiet_routine_tasks": {"()": "core.log_filters.QuietRoutineTasks"},
        },
        "formatters": {
            "structured": {
                "()": structlog.stdlib.ProcessorFormatter,
                "processors": [
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    # JSON: a traceback becomes the `exception` field; the console renderer prints it.
                    *([structlog.processors.format_exc_info] if fmt == "json" else []),
                    _renderer(fmt),
                ],
                "foreign_pre_chain": _SHARED_PROCESSORS,
            }
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "structured",
                "filters": [
                    "client_errors_without_traceback",
                    # LOG_ROUTINE_TASKS=1 brings the routine tasks' lines back (the fault tests count them).
                    *(["quiet_routine_tasks"] if fmt == "console" and quiet_routine else []),
                ],
            }
        },
        "root": {"handlers": ["console"], "level": level},
    }
