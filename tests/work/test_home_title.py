"""The My work tab title is plain text (issue 29): no markup inside <title>."""

from __future__ import annotations

import re


def test_the_my_work_tab_title_is_plain_text(client, lead):
    client.force_login(lead)
    html = client.get("/").content.decode()
    title = re.search(r"<title>(.*?)</title>", html, re.S).group(1)
    assert title == "My work · Rebuild Tracker"
    assert html.count('id="background"') == 1  # the background-jobs line, once, in the page
