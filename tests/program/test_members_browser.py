"""The Members page in the real Chromium, on the demo: a lead adds a user as engineer, makes them a
viewer and removes them, each step said on the page; a viewer sees the members and no form; at
1280 px and at 390 px, where nothing scrolls sideways."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from program.demo import SLUG
from program.models import ProgramMembership
from tests.browser import screenshot, sign_in


def no_sideways_scroll(page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_a_lead_adds_changes_and_removes_a_member(page, demo, width):
    page.set_viewport_size({"width": width, "height": 860})
    sign_in(page, "lead")
    page.goto(f"/programs/{SLUG}/")
    page.get_by_test_id("members-link").click()
    page.wait_for_url(f"**/programs/{SLUG}/members/")
    flash = page.locator("#flash")

    # An unknown name is the field's error, and nothing is added.
    form = page.get_by_test_id("add-member")
    form.get_by_label("User").fill("nobody-here")
    form.locator("select[name=role]").select_option("engineer")
    form.get_by_role("button", name="Add member").click()
    expect(page.get_by_test_id("user-error")).to_have_text("Unknown user “nobody-here”.")

    form = page.get_by_test_id("add-member")
    form.get_by_label("User").fill("metrics")
    form.locator("select[name=role]").select_option("engineer")
    form.get_by_role("button", name="Add member").click()
    expect(flash).to_contain_text("Added metrics as engineer.")
    row = page.get_by_test_id("member-user:metrics")
    expect(row.get_by_test_id("role")).to_have_text("engineer")
    no_sideways_scroll(page, width)
    screenshot(page, f"members-lead-{width}")

    row.get_by_test_id("role-select").select_option("viewer")
    row.get_by_role("button", name="Change role").click()
    expect(flash).to_contain_text("Changed metrics from engineer to viewer.")
    expect(page.get_by_test_id("member-user:metrics").get_by_test_id("role")).to_have_text("viewer")

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id("member-user:metrics").get_by_role("button", name="Remove").click()
    expect(flash).to_contain_text("Removed metrics (viewer)")
    expect(page.get_by_test_id("member-user:metrics")).to_have_count(0)
    assert not ProgramMembership.objects.filter(program__slug=SLUG, user__username="metrics").exists()
    no_sideways_scroll(page, width)


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_a_viewer_sees_the_members_and_no_form(page, demo, width):
    page.set_viewport_size({"width": width, "height": 860})
    sign_in(page, "viewer")
    page.goto(f"/programs/{SLUG}/members/")
    expect(page.get_by_test_id("member-user:lead")).to_be_visible()
    expect(page.get_by_test_id("member-user:viewer").get_by_test_id("role")).to_have_text("viewer")
    expect(page.get_by_test_id("managed-by")).to_be_visible()
    expect(page.locator("#members-panel form")).to_have_count(0)
    expect(page.get_by_role("button", name="Remove")).to_have_count(0)
    no_sideways_scroll(page, width)
    screenshot(page, f"members-viewer-{width}")
