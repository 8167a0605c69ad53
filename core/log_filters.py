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
