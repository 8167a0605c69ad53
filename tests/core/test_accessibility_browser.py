"""Accessibility in the real Chromium (issue 29, items 7 and 8).

axe-core (vendored, tests/axe.py) finds no serious or critical violation on any page: the viewer walks
every page, each writer the pages where they get forms, dark mode a handful. Beside it: the skip link,
visible focus, underlined links, the phone-width nav menu and checkboxes beside their labels.

Each axe test walks its pages and reports every violation at once, so a failure lists all that is
wrong, not the first page only; the demo is loaded once per session and cloned per test.
"""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from core.pages.site import server_error
from core.unavailable import page_unavailable
from freeze.models import FreezeException, FreezeOverride, FreezeWindow
from incidents.models import Incident
from metrics.models import MetricDefinition
from program.models import Gate
from tests.axe import axe_violations
from tests.browser import SCREENSHOTS, screenshot, sign_in

PROGRAM = "frontier-rebuild"
METRIC = "step-time"
PHONE = {"width": 390, "height": 844}
# The pages on which each writer gets forms the viewer does not (the viewer walks them all).
WRITER_PAGES = {
    "lead": [
        "my work",
        "program",
        "gate",
        "gate ready",
        "advance",
        "members",
        "migrations",
        "exception",
        "program new",
        "override new",
        "override review",
    ],
    "engineer": ["exception form", "exception edit", "exception", "exceptions", "incidents", "incident"],
    "metrics": ["register", "version new", "version deprecate", "version activate", "metric", "feeds"],
    "platform": ["levels edit", "freeze list", "queues", "exception", "incident", "tokens", "webhooks"],
}
# At 390 px: the pages whose tables become cards or scroll, and the longest forms.
PHONE_PAGES = [
    "program",
    "gate ready",
    "freeze list",
    "exceptions",
    "exception form",
    "registry",
    "incidents",
]
DARK_PAGES = ["program", "gate ready", "freeze list", "exception form", "registry", "incidents"]


def _pages() -> dict[str, str]:
    """Every screen by name, with ids taken from the demo (the browser needs only URLs)."""
    gate = Gate.objects.filter(phase__program__slug=PROGRAM).order_by("pk").first()
    ready = Gate.objects.filter(phase__program__slug=PROGRAM, status="ready").order_by("pk").first()
    exception = FreezeException.objects.order_by("pk").first()
    window = FreezeWindow.objects.order_by("pk").first()
    incident = Incident.objects.order_by("pk").first()
    draft_exception = FreezeException.objects.filter(status="draft").order_by("pk").first()
    override = FreezeOverride.objects.order_by("pk").first()
    draft = MetricDefinition.objects.filter(status=MetricDefinition.Status.DRAFT).order_by("pk").first()
    active = MetricDefinition.objects.get(key=METRIC, status=MetricDefinition.Status.ACTIVE)
    assert gate and ready and exception and window and incident and draft and draft_exception and override
    return {
        "my work": "/",
        "programs": "/programs/",
        "program new": "/programs/new/",
        "program": f"/programs/{PROGRAM}/",
        "gate": f"/programs/gates/{gate.pk}/",
        "gate ready": f"/programs/gates/{ready.pk}/",
        "advance": f"/programs/{PROGRAM}/advance/",
        "history": f"/programs/{PROGRAM}/history/",
        "members": f"/programs/{PROGRAM}/members/",
        "migrations": f"/programs/{PROGRAM}/migrations/",
        "freeze list": "/freeze/",
        "window history": f"/freeze/windows/{window.pk}/history/",
        "levels edit": f"/freeze/windows/{window.pk}/levels/",  # the viewer gets the styled 403
        "exceptions": "/freeze/exceptions/",
        "exception": f"/freeze/exceptions/{exception.pk}/",
        "exception form": "/freeze/exceptions/new/",
        "exception edit": f"/freeze/exceptions/{draft_exception.pk}/edit/",
        "override new": "/freeze/overrides/new/",
        "override review": f"/freeze/overrides/{override.pk}/review/",
        "queues": "/freeze/queues/",
        "registry": "/metrics/",
        "metric": f"/metrics/{METRIC}/",
        "comparison": "/metrics/compare/",
        "feeds": "/metrics/feeds/",
        "register": "/metrics/new/",
        "version new": f"/metrics/{METRIC}/versions/new/",
        "version deprecate": f"/metrics/{METRIC}@{active.version}/deprecate/",
        "version activate": f"/metrics/{draft.key}@{draft.version}/activate/",
        "incidents": "/incidents/",  # the filing form is on the list page
        "incident": f"/incidents/{incident.pk}/",
        "notifications": "/notifications/",
        "notification settings": "/account/notifications/",
        "tokens": "/account/tokens/",
        "webhooks": "/account/webhooks/",
        "not found": "/no-such-page/",
    }


def _violations_on(page, urls: dict[str, str]) -> list[str]:
    found = []
    for name, url in urls.items():
        page.goto(url)
        found += [f"[{name}] {line}" for line in axe_violations(page)]
    return found


def _report(found: list[str], who: str) -> str:
    return f"{len(found)} serious or critical axe violations {who}:\n" + "\n".join(found)


def test_every_page_is_axe_clean_for_the_viewer(page, demo):
    sign_in(page, "viewer")
    found = _violations_on(page, _pages())
    assert not found, _report(found, "as viewer")


def test_writers_forms_are_axe_clean(browser, live_server, demo):
    # One test for the four writers: each demo clone costs a few seconds, a fresh browser context none.
    pages = _pages()
    found = []
    for role, names in WRITER_PAGES.items():
        context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 860})
        page = context.new_page()
        sign_in(page, role)
        found += [f"({role}) {line}" for line in _violations_on(page, {name: pages[name] for name in names})]
        context.close()
    assert not found, _report(found, "as writers")


def _answer_with(response):
    def answer(route):
        route.fulfill(status=response.status_code, body=response.content.decode(), content_type="text/html")

    return answer


def test_signed_out_and_error_pages_are_axe_clean(page, demo, live_server):
    # The 500 and 503 pages are served as their handlers render them, at URLs of the site so their
    # stylesheet loads (nothing here can make the server fail for real).
    failing = {
        "**/boom/": server_error(RequestFactory().get("/boom/")),
        "**/down/": page_unavailable(RequestFactory().get("/down/")),
    }
    for url, response in failing.items():
        page.route(url, _answer_with(response))
    found = _violations_on(
        page, {"login": "/login/", "password reset": "/password_reset/", "500": "/boom/", "503": "/down/"}
    )
    assert "briefly unavailable" in page.inner_text("main")
    assert not found, _report(found, "signed out")


def test_dark_mode_follows_the_system_and_stays_axe_clean(browser, live_server, demo):
    found = []
    for width, viewport in (("1280", {"width": 1280, "height": 860}), ("390", PHONE)):
        context = browser.new_context(base_url=live_server.url, viewport=viewport, color_scheme="dark")
        page = context.new_page()
        sign_in(page, "lead")
        pages = _pages()
        page.goto(pages["program"])
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(15, 20, 32)", background  # --bg of the dark palette
        # The unread count is dark on its light-red fill (white on it would read at about 2:1).
        count_colour = page.locator("[data-testid=unread-count]").evaluate("el => getComputedStyle(el).color")
        assert count_colour == "rgb(16, 20, 31)", count_colour
        screenshot(page, f"a11y-dark-program-{width}")
        page.screenshot(path=str(SCREENSHOTS / f"a11y-dark-program-top-{width}.png"))  # the viewport only
        # Every dark page at 1280 px; at 390 px the ones whose tables become cards.
        names = DARK_PAGES if width == "1280" else ["registry", "incidents"]
        found += [
            f"({width} px) {line}" for line in _violations_on(page, {name: pages[name] for name in names})
        ]
        screenshot(page, f"a11y-dark-incidents-{width}")
        context.close()
    assert not found, _report(found, "in dark mode")


def test_skip_link_is_the_first_stop_and_focus_is_visible(page, demo):
    sign_in(page, "lead")
    page.goto("/programs/")
    page.keyboard.press("Tab")
    skip = page.locator(":focus")
    assert skip.inner_text() == "Skip to content" and skip.get_attribute("href") == "#content"
    box = skip.bounding_box()
    assert box and box["y"] >= 0  # shown once focused
    outline = page.evaluate(
        "(s => [s.outlineStyle, parseFloat(s.outlineWidth)])(getComputedStyle(document.activeElement))"
    )
    assert outline[0] == "solid" and outline[1] >= 2
    screenshot(page, "a11y-skip-link")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"
    assert page.url.endswith("#content")
    page.goto(f"/programs/{PROGRAM}/")
    # Every kind of control shows a ring when the keyboard reaches it: a nav link, a button.
    for selector in ("header nav a", "main button"):
        page.locator(selector).first.focus()
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Tab")
        style = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert style == "solid", (selector, style)


def test_links_in_text_are_underlined_nav_and_buttons_are_not(page, demo):
    sign_in(page, "lead")
    page.goto(f"/programs/{PROGRAM}/")
    decoration = "el => getComputedStyle(el).textDecorationLine"
    assert page.locator("main p a").first.evaluate(decoration) == "underline"
    assert page.locator("footer a").evaluate(decoration) == "underline"
    assert page.locator("header nav a").first.evaluate(decoration) == "none"
    page.goto("/programs/")
    assert page.locator("main a.program-card").first.evaluate(decoration) == "none"
    assert page.locator("main a.button").first.evaluate(decoration) == "none"


def test_phone_header_is_one_row_and_its_menu_opens(browser, live_server, demo):
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    page = context.new_page()
    sign_in(page, "viewer")
    page.goto("/programs/")
    header = page.locator("header.topbar")
    height = header.bounding_box()["height"]
    assert height < 60, f"header is {height} px tall at 390 px (three rows were 166 px)"
    menu = page.locator("details.nav-menu")
    nav_link = page.locator("header nav a", has_text="Metrics")
    assert page.locator("details.nav-menu > summary").is_visible() and not nav_link.is_visible()
    screenshot(page, "a11y-phone-header-390")
    # Keyboard: the summary opens and closes the menu; Escape gives focus back to it.
    page.locator("details.nav-menu > summary").focus()
    page.keyboard.press("Enter")
    assert menu.get_attribute("open") is not None and nav_link.is_visible()
    screenshot(page, "a11y-phone-menu-open-390")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "My work"
    page.keyboard.press("Escape")
    assert menu.get_attribute("open") is None
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY"
    # Touch: tap Menu, then a link.
    page.click("details.nav-menu > summary")
    nav_link.click()
    page.wait_for_url("**/metrics/")
    assert page.locator("header nav a[aria-current=page]").text_content() == "Metrics"
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # nothing sticks out
    found = axe_violations(page)
    context.close()
    assert not found, _report(found, "at 390 px")


def test_phone_pages_are_axe_clean(browser, live_server, demo):
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    page = context.new_page()
    sign_in(page, "lead")
    pages = _pages()
    found = _violations_on(page, {name: pages[name] for name in PHONE_PAGES})
    context.close()
    assert not found, _report(found, "at 390 px")


def test_wide_header_shows_the_nav_in_one_row(page, demo):
    sign_in(page, "viewer")
    page.goto("/programs/")
    assert not page.locator("details.nav-menu > summary").is_visible()
    links = page.locator("header nav a")
    assert all(links.nth(i).is_visible() for i in range(links.count()))
    assert page.locator("header.topbar").bounding_box()["height"] < 60
    screenshot(page, "a11y-header-1280")


# Where each checkbox or radio sits against the first words of its label.
CHECKBOX_LAYOUT = """() => [...document.querySelectorAll('main label')]
  .filter((label) => label.querySelector(':scope > input[type=checkbox], :scope > input[type=radio]'))
  .map((label) => {
    const box = label.querySelector(':scope > input').getBoundingClientRect();
    const text = [...label.childNodes].find((node) => node.nodeType === 3 && node.textContent.trim());
    const range = document.createRange();
    range.selectNodeContents(text);
    const words = range.getClientRects()[0];
    return {text: text.textContent.trim(), boxWidth: box.width, gap: words.left - box.right,
            level: Math.abs((box.top + box.bottom) / 2 - (words.top + words.bottom) / 2)};
  })"""


@pytest.mark.parametrize("width", [1280, 390])
def test_checkboxes_sit_before_their_labels(browser, live_server, demo, width):
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    sign_in(page, "engineer")
    page.goto("/freeze/exceptions/new/")
    boxes = page.evaluate(CHECKBOX_LAYOUT)
    assert len(boxes) >= 3  # the gate metrics it may affect
    for box in boxes:
        # The box is just before its words, level with their first line (a column put it above them).
        assert box["boxWidth"] < 24 and 0 <= box["gap"] < 16 and box["level"] < 5, box
    page.locator("fieldset.affected-metrics").scroll_into_view_if_needed()
    screenshot(page, f"a11y-exception-form-checkboxes-{width}")
    context.close()
