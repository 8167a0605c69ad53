"""Program months: month 1 starts on the program's start date."""

from __future__ import annotations

from datetime import date
from typing import cast

from dateutil.relativedelta import relativedelta


def month_start(start: date, month: int) -> date:
    """First day of program month `month` (1-based)."""
    # dateutil ships no type information here: relativedelta arithmetic is Any to mypy.
    return cast(date, start + relativedelta(months=month - 1))


def month_end(start: date, month: int) -> date:
    return cast(date, start + relativedelta(months=month) - relativedelta(days=1))


def program_month(start: date, today: date, months: int) -> int:
    """The program month `today` is in: 0 before the start date, at most `months` (a plan that runs
    over stays in its last month)."""
    if today < start:
        return 0
    elapsed = (
        (today.year - start.year) * 12 + today.month - start.month + (1 if today.day >= start.day else 0)
    )
    return max(1, min(elapsed, months))
