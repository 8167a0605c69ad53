"""A lead's morning in the real Chromium: "My work" shows the ready gate and the unread notification,
opening it goes to the gate and the header's count drops."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from core.models import NotificationReceipt
from freeze.selectors import exceptions_awaiting
from program.models import Gate
from tests.browser import screenshot, sign_in
from tests.core.test_security_headers import _watch_for_csp_violations


def unread_count(page) -> int:
    badge = page.locator("[data-testid=unread-count]")
    return int(badge.inner_text()) if badge.count() else 0


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_lead_opens_a_notification_from_my_work(browser, live_server, demo, width):
    gate = Gate.objects.get(phase__program__slug="frontier-rebuild", name="New fully surpasses old")
    assert gate.status == "ready"
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    problems = _watch_for_csp_violations(page)
    try:
        sign_in(page, "lead")  # signing in lands on "My work"
        assert page.locator("h1").inner_text() == "My work"
        ready = page.locator("#ready-gates")
        assert "New fully surpasses old" in ready.inner_text()
        waiting = exceptions_awaiting(User.objects.get(username="lead")).first()
        assert waiting is not None and waiting.title in page.locator("#awaiting").inner_text()
        before = unread_count(page)
        assert (
            before == NotificationReceipt.objects.filter(user__username="lead", read_at__isnull=True).count()
        )
        assert before > 0
        screenshot(page, f"my-work-{width}")

        newest = page.locator("#my-notifications .inbox-item.unread").first
        subject = newest.locator("button.as-link").inner_text()
        newest.locator("button.as-link").click()
        page.wait_for_load_state()
        assert unread_count(page) == before - 1
        receipt = NotificationReceipt.objects.select_related("notification").get(
            user__username="lead", notification__subject=subject.strip()
        )
        assert receipt.read_at is not None
        assert page.url.endswith(receipt.notification.link)
        screenshot(page, f"notification-opened-{width}")

        page.click("header >> text=Notifications")
        page.wait_for_url("**/notifications/")
        screenshot(page, f"notifications-{width}")
        page.click("button:has-text('Mark all')")
        page.wait_for_selector("text=as read.")
        assert unread_count(page) == 0
        screenshot(page, f"notifications-all-read-{width}")
        assert problems == []  # no inline script or style the policy refuses, no script errors
    finally:
        context.close()
