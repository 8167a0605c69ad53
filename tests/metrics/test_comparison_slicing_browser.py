"""The comparison page's small multiples in the real Chromium, at desktop and phone width."""

from __future__ import annotations

import random

import pytest
from playwright.sync_api import expect

from tests.browser import screenshot, sign_in
from tests.conftest import PASSWORD, make_user
from tests.metrics.factories import reference_data
from tests.metrics.test_comparison_slicing import add

# MTTR-like hours per bug class: better, worse, and no clear difference on the rebuilt stack.
CENTRES = {
    "communication-hang": (10.0, 6.0),
    "numerical-divergence": (5.0, 7.0),
    "data-pipeline": (3.0, 3.05),
    "checkpoint-restore": (4.0, 3.0),
}


@pytest.fixture
def sliced(transactional_db):
    ref = reference_data()
    rng = random.Random(9)
    for bug_class, (old, new) in CENTRES.items():
        for system, centre in (("legacy", old), ("rebuilt", new)):
            values = [rng.gauss(centre, centre * 0.15) for _ in range(40)]
            add(ref, system, values, tags={"bug_class": bug_class, "severity": "sev1"}, prefix=bug_class)
    add(ref, "rebuilt", [5.0] * 40, workload="large", tags={"bug_class": "data-pipeline"}, prefix="big")
    make_user("viewer")
    return ref


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_small_multiples_per_group(page, sliced, width):
    page.set_viewport_size({"width": width, "height": 860})
    sign_in(page, "viewer", PASSWORD)
    page.goto("/metrics/compare/?metric=latency&baseline=legacy&candidate=rebuilt&statistic=mean")
    page.select_option("select[name=group_by]", "bug_class")
    page.fill("input[name=tags]", "severity=sev1")
    page.click("button:has-text('Compare')")
    cards = page.locator(".group-card")
    expect(cards).to_have_count(4)
    verdicts = {
        cards.nth(i).get_attribute("data-group"): cards.nth(i).locator(".badge").inner_text()
        for i in range(4)
    }
    assert verdicts["communication-hang"] == "better" and verdicts["numerical-divergence"] == "worse"
    assert "group_by=bug_class" in page.url and "tags=severity" in page.url
    # The pooled rows with the filter are medium only: no pooling warning; without it the large rows join.
    assert page.locator(".card.warning").count() == 0
    # Nothing overflows the viewport: each card fits, side by side on desktop, stacked on a phone.
    boxes = [cards.nth(i).bounding_box() for i in range(4)]
    assert all(box["x"] >= 0 and box["x"] + box["width"] <= width + 1 for box in boxes)
    columns = len({round(box["x"]) for box in boxes})
    assert columns == (1 if width == 390 else 4) or (width == 1280 and columns >= 2)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"comparison-small-multiples-{width}")
    page.fill("input[name=tags]", "")
    page.click("button:has-text('Compare')")
    expect(page.locator(".card.warning")).to_contain_text("pools workloads of different sizes")
