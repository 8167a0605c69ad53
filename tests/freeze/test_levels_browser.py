"""A lead changes one level in the real Chromium (the others stay default), and the freeze list
reads as one table at desktop width and at 390 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from freeze.models import FreezeEntry, FreezeWindow
from tests.browser import screenshot, sign_in

CUTOVER = "Cutover wave 2 stabilisation"
# In the demo these follow the cutover window's default (approval).
DEFAULTS = {"ib-fabric", "dataloader", "serving-router", "batch-scheduler", "trainer-core"}


def explicit(window) -> dict[str, str]:
    return dict(FreezeEntry.objects.filter(window=window).values_list("component__key", "level"))


@pytest.mark.browser
def test_lead_changes_one_level_and_the_others_stay_default(page, demo):
    window = FreezeWindow.objects.get(name=CUTOVER)
    before = explicit(window)
    assert not DEFAULTS & set(before)
    sign_in(page, "lead")
    page.goto(f"/freeze/windows/{window.pk}/")
    page.click("text=Edit levels")
    # The click starts a navigation; wait for the new page rather than read the old one's title.
    expect(page).to_have_title(f"Edit levels · {CUTOVER} · Rebuild Tracker")
    page.select_option("select[name=dataloader]", "frozen")
    page.fill("input[name=reason]", "loader rewrite lands after the wave")
    screenshot(page, "levels-edit")
    page.click("button:has-text('Save levels')")
    page.wait_for_selector(".flash-success")
    assert f"1 level changed in '{CUTOVER}'." in page.inner_text(".flash")
    assert explicit(window) == {**before, "dataloader": "frozen"}
    history = page.inner_text("[data-testid=window-history]")
    assert f"Lena Lead set dataloader to frozen (was approval) in '{CUTOVER}'" in history
    assert "loader rewrite lands after the wave" in history
    row = page.locator("tr", has=page.locator("th[scope=row]", has_text="dataloader"))
    assert row.locator(".level-cell .badge").first.inner_text() == "frozen"
    assert "default" not in row.locator(".level-cell").first.get_attribute("class") + row.locator(
        ".level-cell .badge"
    ).first.get_attribute("class")
    other = page.locator("tr", has=page.locator("th[scope=row]", has_text="serving-router"))
    assert "default" in other.locator(".level-cell .badge").first.get_attribute("class")


@pytest.mark.browser
def test_freeze_list_is_one_table_at_desktop_and_phone_width(page, demo):
    sign_in(page, "lead")
    page.goto("/freeze/")
    tables = page.locator("main table")
    assert tables.count() == 1
    header = page.locator("[data-testid=freeze-table] thead th").all_inner_texts()
    assert header[0].strip().lower() == "component" and "open exceptions" in header[-1].lower()
    assert CUTOVER in " ".join(header)
    # Every row has the same number of cells as the header (layer rows span them all).
    widths = page.eval_on_selector_all(
        "[data-testid=freeze-table] tbody tr:not(.layer-row)", "rows => rows.map(r => r.children.length)"
    )
    assert set(widths) == {len(header)}
    screenshot(page, "freeze-list-table")
    frontier = FreezeWindow.objects.filter(phase__kind="frontier").first()
    page.select_option(
        "select[name=window]",
        label=next(
            o
            for o in page.locator("select[name=window] option").all_inner_texts()
            if o.startswith(frontier.name)
        ),
    )
    page.wait_for_url(f"**/freeze/windows/{frontier.pk}/")
    assert "when" in page.inner_text("[data-testid=as-of]")
    screenshot(page, "freeze-list-upcoming-window")

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/freeze/")
    # The page itself does not scroll sideways: the table scrolls inside its box.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    box = page.locator(".freeze-table-wrap").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    first_header = page.locator("[data-testid=freeze-table] thead th").first.bounding_box()
    assert first_header["x"] + first_header["width"] <= 390
    screenshot(page, "freeze-list-390")
    window = FreezeWindow.objects.get(name=CUTOVER)
    page.goto(f"/freeze/windows/{window.pk}/levels/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "levels-edit-390")
