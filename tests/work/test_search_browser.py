"""Search and keyboard shortcuts in the real Chromium, at desktop and phone width: `/` focuses the
header's box, Enter shows the results, the page's own box asks again as one types, `g f` goes to the
freeze list (but not while typing), `?` opens the list of shortcuts and Escape closes it. All under the
strict Content-Security-Policy (no inline script)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser import screenshot, sign_in
from tests.core.test_security_headers import _watch_for_csp_violations


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_search_from_the_header_and_the_shortcuts(page, demo, width):
    page.set_viewport_size({"width": width, "height": 860})
    problems = _watch_for_csp_violations(page)
    sign_in(page, "viewer")
    box = page.locator("#site-search-q")
    # The box (a magnifier at phone width) makes the header no taller: it wraps no more than without it.
    header_height = "document.querySelector('.topbar').getBoundingClientRect().height"
    with_box = page.evaluate(header_height)
    page.evaluate("document.querySelector('.site-search').style.display = 'none'")
    without_box = page.evaluate(header_height)
    page.evaluate("document.querySelector('.site-search').style.display = ''")
    assert with_box <= without_box + 1
    assert box.bounding_box()["width"] < (100 if width < 700 else 300)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"search-header-{width}")

    page.keyboard.press("/")
    expect(box).to_be_focused()
    box.fill("kernels")
    screenshot(page, f"search-typing-{width}")
    box.press("Enter")
    page.wait_for_url("**/search/?q=kernels")
    components = page.get_by_test_id("search-group-components")
    expect(components.get_by_role("link", name="Fused attention kernels")).to_have_attribute(
        "href", "/freeze/components/kernels/"
    )
    expect(page.get_by_test_id("search-group-exceptions")).to_contain_text("kernel")

    # On the results page `/` goes to the page's own box, which asks again as one types.
    page.locator("h1").click()
    page.keyboard.press("/")
    page_box = page.locator("#search-q")
    expect(page_box).to_be_focused()
    page_box.fill("loss diverges")
    expect(page.get_by_test_id("search-group-incidents")).to_contain_text("Loss diverges to NaN")
    expect(page.get_by_test_id("search-group-components")).to_have_count(0)
    assert "q=loss%20diverges" in page.url  # Back returns to these results
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"search-results-{width}")

    # Typing `g f` in a field is text, not a shortcut.
    page_box.fill("")
    page_box.type("gf")
    assert "/search/" in page.url
    page_box.press("Escape")  # leaves the box, so the keys are shortcuts again
    expect(page_box).not_to_be_focused()

    page.keyboard.press("?")
    dialog = page.locator("dialog#shortcuts-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Go to Freeze list")
    expect(dialog.locator("dt", has_text="g")).to_have_count(6)
    screenshot(page, f"search-shortcuts-{width}")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    page.goto("/search/?q=no-such-thing")
    expect(page.get_by_test_id("search-none")).to_contain_text("Nothing matches “no-such-thing”")
    screenshot(page, f"search-none-{width}")

    page.keyboard.press("g")
    page.keyboard.press("f")
    page.wait_for_url("**/freeze/")
    page.keyboard.press("g")
    page.keyboard.press("i")
    page.wait_for_url("**/incidents/")
    assert problems == []
