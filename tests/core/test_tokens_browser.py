"""The tokens page in the real Chromium: make a token, copy it, use it against the API, at 390 px too."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.browser import screenshot, sign_in


def api_get(base_url: str, path: str, token: str) -> tuple[int, dict]:
    request = urllib.request.Request(f"{base_url}{path}", headers={"Authorization": f"Token {token}"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_make_a_token_on_the_page_and_use_it(page, demo, live_server, width):
    page.set_viewport_size({"width": width, "height": 860})
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    sign_in(page, "viewer")
    page.click(".account-menu summary")  # the account's own pages are in the header's menu
    page.get_by_role("link", name="API tokens").click()
    page.wait_for_url("**/account/tokens/")
    page.fill("input[name=name]", f"from the browser {width}")
    page.get_by_label("freeze-check: read the freeze check").check()
    page.get_by_label("read: everything this user may read").uncheck()
    page.get_by_role("button", name="Create token").click()
    secret_box = page.get_by_test_id("token-secret")
    expect(secret_box).to_be_visible()
    expect(page.locator("#flash")).to_contain_text("Copy it now")
    secret = secret_box.inner_text().strip()
    assert secret.startswith("rt_")
    page.get_by_test_id("copy-token").click()
    expect(page.get_by_test_id("copy-token")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == secret
    # Nothing sticks out sideways on a phone: the secret wraps.
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"api-tokens-{width}")

    status, body = api_get(live_server.url, "/api/v1/freeze/check/?component=kernels", secret)
    assert status == 200 and body["component"] == "kernels"
    status, body = api_get(live_server.url, "/api/v1/programs/", secret)
    assert status == 403 and "`read`" in body["detail"]

    page.once("dialog", lambda dialog: dialog.accept())
    row = page.get_by_test_id("token-row").filter(has_text=f"from the browser {width}")
    row.get_by_role("button", name="Revoke").click()
    expect(row.locator(".badge")).to_have_text("revoked")
    expect(page.get_by_test_id("token-secret")).to_have_count(0)
    status, _ = api_get(live_server.url, "/api/v1/freeze/check/?component=kernels", secret)
    assert status == 401
