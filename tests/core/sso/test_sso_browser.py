"""Single sign-on in the real Chromium through the real provider's own login and consent pages: the
person lands on My work and sees what their groups allow; a group taken away at the provider takes the
role away at the next sign-in."""

from __future__ import annotations

import pytest

from tests.browser import screenshot
from tests.core.sso.conftest import PROVIDER_NAME, configure

ERIN = {"preferred_username": "erin", "email": "erin@example.com", "given_name": "Erin", "family_name": "Ek"}


def sign_in_with_the_provider(page, provider, login: str) -> None:
    """From the login page through whichever of the provider's pages it shows: its login form the first
    time, its consent page; a provider that remembers the person skips them."""
    page.click(f"text=Sign in with {PROVIDER_NAME}")
    for _ in range(3):
        page.wait_for_load_state()
        if not page.url.startswith(provider.issuer):
            return
        if page.locator("input[name=login]").count():
            page.fill("input[name=login]", login)
            page.fill("input[name=password]", "any password: the development login checks none")
            screenshot(page, "sso-provider-login")
        page.click("button[type=submit]")


@pytest.mark.browser
def test_sign_in_through_the_provider_lands_on_my_work_with_what_the_groups_allow(
    page, live_server, oidc_provider, settings
):
    oidc_provider.reset()
    configure(settings, oidc_provider, f"{live_server.url}/oidc/callback/")
    oidc_provider.user("erin", **ERIN, groups=["rt-engineers", "rt-metric-owners", "training-platform"])
    # The provider's development pages load a web font; this machine may be offline.
    page.route("https://fonts.googleapis.com/**", lambda route: route.abort())

    page.goto("/")
    assert "/login/" in page.url
    screenshot(page, "sso-login")
    sign_in_with_the_provider(page, oidc_provider, "erin")
    page.wait_for_url(f"{live_server.url}/")
    assert page.locator("h1").inner_text() == "My work"
    assert "Erin Ek" in page.locator(".who").inner_text()
    # A framework engineer may request exceptions; not a program lead.
    assert page.locator("#my-exceptions a", has_text="Request an exception").count() == 1
    assert "Program leads decide gates" in page.locator("#ready-gates").inner_text()
    screenshot(page, "sso-my-work")
    page.goto("/metrics/")
    assert page.locator("a", has_text="Register a metric").count() == 1  # metric owner

    # The metric owners' group is taken away at the provider: gone at the next sign-in.
    oidc_provider.user("erin", **ERIN, groups=["rt-engineers", "training-platform"])
    page.click(".account-menu summary")
    page.click("text=Sign out")
    page.wait_for_url("**/login/")
    sign_in_with_the_provider(page, oidc_provider, "erin")
    page.wait_for_url(f"{live_server.url}/")
    assert page.locator("#my-exceptions a", has_text="Request an exception").count() == 1
    page.goto("/metrics/")
    assert page.locator("a", has_text="Register a metric").count() == 0
