"""The gate page's Calibration disclosure in the real Chromium: opened, loaded by htmx, at 1280 and 390 px."""

from __future__ import annotations

import pytest

from program.calibration import calibration_criterion_get, criterion_calibration
from program.models import Criterion
from tests.browser import screenshot, sign_in


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_viewer_opens_a_criterions_calibration_on_the_gate_page(page, demo, width):
    criterion = Criterion.objects.get(name="Checkpoint save time ≥ 0.95× legacy")
    page.set_viewport_size({"width": width, "height": 860})
    sign_in(page, "viewer")
    page.goto(f"/programs/gates/{criterion.gate_id}/")
    card = page.locator("li.criterion-line", has_text=criterion.name)
    disclosure = card.locator("details.calibration")
    assert disclosure.locator(".calibration-body").count() == 0  # nothing read until it is opened
    disclosure.locator("summary").click()
    body = disclosure.locator(".calibration-body")
    body.wait_for()
    reading = body.locator(".calibration-reading").inner_text()
    assert reading.startswith("Would have failed since")
    assert "the threshold 0.95" in reading
    chart = body.locator("svg.calibration-chart")
    assert chart.is_visible()
    # One dot per moment, coloured by its outcome, as the selector judged them.
    points = criterion_calibration(calibration_criterion_get(criterion.pk)).points
    assert chart.locator("circle.point").count() == len(points) >= 5
    failing = sum(1 for p in points if p.outcome == "fail")
    assert chart.locator("circle.point.fail").count() == failing >= 5
    assert chart.locator("polygon").count() >= 1  # the interval band
    box = chart.bounding_box()
    assert box["width"] <= width  # fits the phone's screen: no sideways scrolling for the chart
    card.scroll_into_view_if_needed()
    screenshot(page, f"gate-calibration-{width}")
