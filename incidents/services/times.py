"""The time-order rules: opened ≤ detected ≤ mitigated ≤ resolved, one 400 entry per broken rule."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from core.errors import ApplicationError
from incidents.models import TIME_FIELDS
from metrics.public import CLOCK_SKEW

MSG_ORDER = "{later} must not be before {earlier}."
MSG_FUTURE = "{field} must not be in the future."
MSG_TIMES = "The incident's times are out of order."


def time_order_problems(times: dict[str, datetime | None]) -> list[dict[str, str]]:
    """Each set time against the nearest earlier set time; a future time is refused too."""
    problems = []
    latest = timezone.now() + CLOCK_SKEW
    previous: tuple[str, datetime] | None = None  # the nearest earlier set time: (field, moment)
    for name in TIME_FIELDS:
        moment = times.get(name)
        if moment is None:
            continue
        if moment > latest:
            problems.append({"field": name, "message": MSG_FUTURE.format(field=name)})
        elif previous is not None and moment < previous[1]:
            problems.append({"field": name, "message": MSG_ORDER.format(later=name, earlier=previous[0])})
        previous = (name, moment)
    return problems


def time_order_check(times: dict[str, datetime | None]) -> None:
    problems = time_order_problems(times)
    if problems:
        raise ApplicationError(
            problems[0]["message"] if len(problems) == 1 else MSG_TIMES, status=400, errors=problems
        )
