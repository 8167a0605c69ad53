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
