"""The timeline reads as a plan: month axis, slip per phase, numbered gates, today, overruns shown."""

from __future__ import annotations

from datetime import date

import pytest

from program import selectors
from program.models import Phase
from program.timeline_svg import timeline_svg
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def program(db, lead):
    metrics_for_template()
    return make_program(lead)  # starts 1 Jan 2026, 14 months


def test_slip_per_phase_and_the_month_axis(program):
    Phase.objects.filter(kind="poc").update(status="completed", actual_end=date(2026, 4, 12))
    Phase.objects.filter(kind="canary").update(status="active", actual_start=date(2026, 4, 12))
    timeline = selectors.program_timeline(selectors.program_get(program.slug), today=date(2026, 9, 10))
    slips = {bar.phase.kind: bar.slip_text for bar in timeline.bars}
    assert slips == {
        "poc": "ended 12 days late",
        "canary": "started 11 days late, 10 days overdue",
        "cutover": "starts 1 Sep 2026",
        "frontier": "starts 1 Jan 2027",
    }
    assert [t.number for t in timeline.ticks] == list(range(1, 15))
    assert [t.calendar for t in timeline.ticks[:3]] == ["Jan ’26", "Feb", "Mar"]
    assert timeline.ticks[12].calendar == "Jan ’27"
    svg = timeline_svg(timeline)
    assert ">M1<" in svg and ">M14<" in svg and ">today 10 Sep<" in svg
    assert ">ended 12 days late<" in svg
    assert svg.count('class="tl-gate') == len(timeline.gate_marks) > 0
    assert [m.number for m in timeline.gate_marks] == list(range(1, len(timeline.gate_marks) + 1))


def test_a_plan_past_month_14_gets_more_months_instead_of_a_cut_bar(program):
    Phase.objects.filter(kind="frontier").update(planned_end=date(2027, 4, 20))
    timeline = selectors.program_timeline(selectors.program_get(program.slug), today=date(2026, 9, 10))
    assert timeline.ticks[-1].number == 16
    frontier = timeline.bars[-1]
    assert frontier.planned[0] + frontier.planned[1] <= 100


def test_today_outside_the_program_draws_no_line(program):
    timeline = selectors.program_timeline(selectors.program_get(program.slug), today=date(2025, 6, 1))
    assert timeline.today_left is None
    assert "tl-today" not in timeline_svg(timeline)
