"""Metric pages answer unknown or malformed input with a 4xx page, never a 500."""

import pytest


@pytest.mark.parametrize("path", ["/metrics/nope/", "/metrics/latency@9/", "/metrics/nope@1/"])
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


def test_comparison_page_reads_right_for_a_lower_is_better_metric(client, viewer, ref):
    from tests.metrics.test_comparisons import add

    add(ref, "legacy", [1.0 + i * 1e-3 for i in range(400)])
    add(ref, "rebuilt", [0.785 * (1.0 + i * 1e-3) for i in range(400)])
    client.force_login(viewer)
    params = {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt", "statistic": "p95"}
    page = client.get("/metrics/compare/", params).content.decode()
    assert (
        "Candidate p95 is 0.785× the baseline&#x27;s — 21.5 % lower, which is better for this metric" in page
    )
    assert "1.27×" in page  # relative performance: baseline / candidate for latency
    assert "&lt; 1e-6" in page  # the p-value, not 1e-101
    assert page.count("95 % interval") == 2  # the ratio's, and the table column of each side's
