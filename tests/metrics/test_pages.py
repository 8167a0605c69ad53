"""Metric pages answer unknown or malformed input with a 4xx page, never a 500."""

import pytest


@pytest.mark.parametrize("path", ["/metrics/nope/", "/metrics/latency@1/"])
def test_unknown_metric_page_is_404(client, viewer, ref, path):
    client.force_login(viewer)
    assert client.get(path).status_code == 404


def test_comparison_page_shows_a_bad_window_as_a_message(client, viewer, ref):
    client.force_login(viewer)
    response = client.get(
        "/metrics/compare/",
        {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt", "since": "garbage"},
    )
    assert response.status_code == 200
    assert "since: Datetime has wrong format" in response.content.decode()
