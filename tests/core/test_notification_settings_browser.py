"""Notification settings and webhook endpoints in the real Chromium, at desktop width and at 390 px."""

from __future__ import annotations

import pytest

from core.models import WebhookEndpoint
from core.services.preferences import notification_preferences_of
from tests.browser import screenshot, sign_in
from tests.core.test_security_headers import _watch_for_csp_violations


def no_sideways_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_choosing_the_digest_and_adding_an_endpoint(browser, live_server, demo, width):
    from django.contrib.auth.models import User

    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    page = context.new_page()
    problems = _watch_for_csp_violations(page)
    try:
        sign_in(page, "lead")
        page.goto("/notifications/")
        page.click("main >> text=Settings")  # the header's menu has a "Notification settings" link too
        page.wait_for_url("**/account/notifications/")
        page.check("input[name=gates][value=digest]")
        page.check("input[name=incidents][value=in_app]")
        assert no_sideways_scroll(page)
        page.click("text=Save preferences")
        page.wait_for_load_state()
        flash = page.locator(".flash-success").inner_text()
        assert "Saved. Gates: in-app and a daily digest email; Incidents: in-app only." in flash
        assert page.locator("input[name=gates][value=digest]").is_checked()
        choices = notification_preferences_of(User.objects.get(username="lead"))
        assert (choices["gates"], choices["incidents"]) == ("digest", "in_app")
        screenshot(page, f"notification-settings-{width}")

        page.click("text=Webhook endpoints")
        page.wait_for_url("**/account/webhooks/")
        page.fill("input[name=name]", f"Chat {width}")
        page.select_option("select[name=format]", "slack")
        page.fill("input[name=url]", "https://hooks.slack.com/services/T000/B000/XXXX")
        page.check("input[name=events][value=gates]")
        assert no_sideways_scroll(page)
        page.click("text=Add endpoint")
        page.wait_for_load_state()
        secret = page.locator("[data-testid=secret]").inner_text()
        created = WebhookEndpoint.objects.get(name=f"Chat {width}")
        assert (secret, created.format) == (created.secret, "slack")
        assert "Slack incoming webhook: nothing to copy" in page.locator("[data-testid=created]").inner_text()
        assert no_sideways_scroll(page)
        screenshot(page, f"webhooks-created-{width}")
        page.goto("/account/webhooks/")
        assert secret not in page.content()
        assert problems == []
    finally:
        context.close()
