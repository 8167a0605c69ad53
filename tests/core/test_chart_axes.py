"""The time-series chart's axes (core.charts): round tick steps, tick labels with the unit, time ticks
on whole hours or days, and a legend naming every series."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.charts import nice_step, nice_ticks, tick_text, time_series_chart, time_ticks


@pytest.mark.parametrize(
    ("span", "count", "step"),
    [(10, 5, 2), (1, 5, 0.2), (0.37, 5, 0.1), (730, 5, 200), (97, 4, 25), (3, 6, 0.5), (12_000, 5, 2500)],
)
def test_steps_are_one_two_two_and_a_half_or_five_times_a_power_of_ten(span, count, step):
    assert nice_step(span, count) == pytest.approx(step)


def test_ticks_cover_the_values_with_round_numbers():
    assert nice_ticks(0.83, 1.27, 5) == [0.8, 0.9, 1.0, 1.1, 1.2, 1.3]
    assert nice_ticks(41_200, 52_900, 5) == [40_000, 42_500, 45_000, 47_500, 50_000, 52_500, 55_000]
    ticks = nice_ticks(3.1, 3.1)  # a flat series still gets a range around it
    assert ticks[0] < 3.1 < ticks[-1] and len(ticks) >= 3


def test_tick_labels_carry_the_unit_and_only_the_decimals_the_step_needs():
    assert tick_text(1.2, 0.2, "s") == "1.2 s"
    assert tick_text(1.0, 0.2, "s") == "1.0 s"
    assert tick_text(45_000, 2500, "token/s") == "45,000 token/s"
    assert tick_text(0.25, 0.25, "ms") == "0.25 ms"
    assert tick_text(-0.0, 0.5) == "0.0"


def test_time_ticks_fall_on_whole_hours_within_a_day_and_on_midnights_over_weeks():
    start = datetime(2026, 12, 1, 9, 40, tzinfo=UTC)
    hours = time_ticks(start, start + timedelta(hours=20), 6)
    assert [label for _, label in hours] == ["12:00", "16:00", "20:00", "2 Dec", "04:00"]
    days = time_ticks(start, start + timedelta(days=13), 6)
    assert all(at.hour == 0 and at.minute == 0 for at, _ in days)
    assert 3 <= len(days) <= 6 and days[0][0] > start


def test_the_chart_has_both_axes_gridlines_titles_and_a_legend():
    start = datetime(2026, 12, 1, tzinfo=UTC)
    svg = time_series_chart(
        [
            ("legacy (baseline)", [(start + timedelta(hours=i), 1.0 + i / 10) for i in range(12)]),
            ("rebuilt (candidate)", [(start + timedelta(hours=i), 0.8 + i / 12) for i in range(12)]),
        ],
        unit="s",
        y_title="p95 per hour, s",
        x_title="time (UTC)",
    )
    assert svg.count('class="legend-item"') == 2
    assert ">legacy (baseline)</text>" in svg and ">rebuilt (candidate)</text>" in svg
    assert ">p95 per hour, s</text>" in svg and ">time (UTC)</text>" in svg
    assert svg.count('class="grid"') >= 6  # horizontal and vertical gridlines
    assert ">1.0 s</text>" in svg and ">2.0 s</text>" in svg  # y ticks with the unit
    assert ">1 Dec</text>" in svg and ">06:00</text>" in svg  # x ticks: the date, then hours
    assert svg.count("<polyline") == 2 and 'stroke-dasharray="5 3"' in svg  # the baseline dashed


def test_no_points_is_a_sentence_not_an_empty_frame():
    assert "No observations" in time_series_chart([("a", []), ("b", [])], unit="s", y_title="", x_title="")
