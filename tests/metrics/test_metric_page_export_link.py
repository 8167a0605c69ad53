"""The metric page's Download CSV: the whole series while it fits the export's row limit, else the newest
days that fit, so the button downloads a file instead of the export's 400 (metrics/pages/metrics.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from metrics.pages.metrics import _export_since


def day(n: int) -> datetime:
    return datetime(2026, 11, n, tzinfo=UTC)


# {workload: {system: [(day, median, n)]}}, as series_daily gives it: 3 days of 40 + 60 rows a day.
SERIES = {
    "pretrain": {
        "legacy": [(day(1), 1.0, 10), (day(2), 1.0, 10), (day(3), 1.0, 10)],
        "rebuilt": [(day(1), 1.0, 30), (day(2), 1.0, 30), (day(3), 1.0, 30)],
    },
    "finetune": {"rebuilt": [(day(1), 1.0, 60), (day(2), 1.0, 60), (day(3), 1.0, 60)]},
}


def test_a_series_within_the_limit_downloads_whole():
    assert _export_since(SERIES, 300) == ""


def test_a_series_over_the_limit_starts_at_the_first_of_the_newest_days_that_fit():
    assert _export_since(SERIES, 299) == "2026-11-02T00:00:00Z"
    assert _export_since(SERIES, 200) == "2026-11-02T00:00:00Z"
    assert _export_since(SERIES, 199) == "2026-11-03T00:00:00Z"


def test_an_empty_series_downloads_whole():
    assert _export_since({}, 10) == ""
