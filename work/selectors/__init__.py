"""Reads of the home page's lists of work."""

from work.selectors.work import (
    SHOWN,
    MyWork,
    Section,
    exceptions_awaiting_for,
    exceptions_requested_by,
    gates_ready_for,
    latest_notifications,
    my_work,
    stale_gates_for,
)

__all__ = [
    "SHOWN",
    "MyWork",
    "Section",
    "exceptions_awaiting_for",
    "exceptions_requested_by",
    "gates_ready_for",
    "latest_notifications",
    "my_work",
    "stale_gates_for",
]
