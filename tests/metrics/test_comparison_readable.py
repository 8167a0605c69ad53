"""The comparison page a lead can read (issue 29): a time series of both systems with axes, ticks and
a legend; the verdict in words with the numbers; the effect said one way, the rest folded away; the
previous version offered when the active one has no data; the activation that warns first."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from metrics.models import MetricDefinition, Observation
from tests.metrics.factories import definition

PARAMS = {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt", "statistic": "p95"}


def spread(ref, system: str, level: float, n: int, *, metric=None, hours: int = 30, tag: str = "") -> None:
    """`n` observations of `system` around `level` (a slow ripple), evenly over the last `hours`."""
    start = timezone.now() - timedelta(hours=hours)
    Observation.objects.bulk_create(
        Observation(
            definition=metric or ref["latency"],
            system=ref[system],
            workload=ref["medium"],
            value=level * (1 + (i % 9) / 100),
            unit="s",
            observed_at=start + timedelta(hours=hours) * i / n,
            run_id=f"{tag}{system}-{i}",
        )
        for i in range(n)
    )


def page_of(client, viewer, **params) -> str:
    client.force_login(viewer)
    response = client.get("/metrics/compare/", {**PARAMS, **params})
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_charts_both_systems_over_time_with_axes_ticks_and_a_legend(client, viewer, ref):
    spread(ref, "legacy", 1.0, 300)
    spread(ref, "rebuilt", 0.8, 300)
    page = page_of(client, viewer)
    chart = page.split('id="comparison-chart"')[1].split("</figure>")[0]
    assert chart.count('class="chart time-series"') == 2  # wide and phone-width drawings
    for legend in ("legacy (baseline)", "rebuilt (candidate)"):
        assert f">{legend}</text>" in chart
    assert ">p95 per hour, s</text>" in chart and ">time (UTC)</text>" in chart
    assert chart.count("<polyline") == 4  # two systems, in each drawing
    assert " s</text>" in chart.split('class="tick"')[1]  # the first y tick carries the unit
    assert 'class="grid"' in chart
    assert "Each point is the p95 of one hour&#x27;s observations of each system" in chart
    assert "comparison-bars" not in page and 'aria-label="comparison"' not in page  # the axis-less bars went


def test_a_window_over_three_days_is_bucketed_by_day(client, viewer, ref):
    spread(ref, "legacy", 1.0, 200, hours=24 * 8)
    spread(ref, "rebuilt", 0.8, 200, hours=24 * 8)
    chart = page_of(client, viewer).split('id="comparison-chart"')[1]
    assert ">p95 per UTC day, s</text>" in chart


def test_too_few_observations_say_how_many_of_how_many_are_needed(client, viewer, ref):
    spread(ref, "legacy", 1.0, 40)
    spread(ref, "rebuilt", 0.8, 55)
    page = page_of(client, viewer)
    badge = page.split('id="comparison-verdict"')[1].split("</span>")[0]
    assert "not enough data: 40 of 72 needed for a p95 interval" in badge
    assert ">insufficient_data<" not in page
    # p50's interval needs fewer than the comparison's own minimum (30): that minimum is the number said.
    badge = page_of(client, viewer, statistic="p50").split('id="comparison-verdict"')[1].split("</span>")[0]
    assert "not enough data" not in badge  # 40 and 55 observations are enough for a p50 interval


def test_the_effect_is_said_one_way_and_the_ratio_and_raw_change_are_folded(client, viewer, ref):
    from tests.metrics.test_comparisons import add

    add(ref, "legacy", [1.0 + i * 1e-3 for i in range(400)])
    add(ref, "rebuilt", [0.785 * (1.0 + i * 1e-3) for i in range(400)])
    page = page_of(client, viewer)
    shown, folded = page.split('<details class="effect-details"')
    assert "Candidate 27 % better</strong> on p95" in shown
    assert "% better" in shown.split("95 % interval:")[1].split("</p>")[0]  # its interval in the same words
    assert "×" not in shown.split('id="comparison-verdict"')[1]  # no ratio before the details
    assert "Improvement" not in page and "Change of the value" not in page
    folded = folded.split("</details>")[0]
    assert "1.27×" in folded and "0.785× the baseline&#x27;s — 21.5 % lower" in folded
    assert "<strong>MOVER</strong>: combines the two sides&#x27; intervals" in folded


def test_grouped_cards_say_the_effect_and_the_verdict_in_words(client, viewer, ref):
    from tests.metrics.test_comparison_slicing import add

    add(ref, "legacy", [1.0 + i * 1e-3 for i in range(80)], tags={"region": "eu"}, prefix="eu")
    add(ref, "rebuilt", [0.8 + i * 1e-3 for i in range(80)], tags={"region": "eu"}, prefix="eu")
    add(ref, "legacy", [1.0] * 5, tags={"region": "us"}, prefix="us")
    add(ref, "rebuilt", [1.0] * 5, tags={"region": "us"}, prefix="us")
    page = page_of(client, viewer, statistic="p50", group_by="region")
    cards = {card.split('"')[0]: card for card in page.split('data-group="')[1:]}
    assert "Candidate" in cards["eu"] and "% better" in cards["eu"]
    assert "not enough data: 5 of 30 needed for a p50 interval" in cards["us"]


@pytest.fixture
def moved_to_empty(ref):
    """latency@1 (deprecated) has data on both sides; latency@2 is active and has none yet."""
    v1 = ref["latency"]
    spread(ref, "legacy", 1.0, 120, metric=v1)
    spread(ref, "rebuilt", 0.8, 120, metric=v1)
    MetricDefinition.objects.filter(pk=v1.pk).update(status="deprecated")
    return definition(key="latency", version=2, excludes=["queueing"])


def test_an_active_version_without_data_offers_the_previous_one(client, viewer, ref, moved_to_empty):
    page = page_of(client, viewer)
    offer = page.split('id="previous-version-offer"')[1].split("</div>")[0]
    assert "latency@2 has no observations yet for legacy and rebuilt" in offer
    assert "Compare on latency@1 instead — the previous definition" in offer
    assert "metric=latency%401" in offer and "statistic=p95" in offer
    assert "measures differently: excludes: nothing → queueing" in offer
    previous = page_of(client, viewer, metric="latency@1")
    assert 'id="previous-version-offer"' not in previous  # v1 has data: nothing to offer
    assert "legacy (baseline)</text>" in previous


def test_the_offer_costs_no_query_when_both_sides_have_data(client, viewer, ref, moved_to_empty):
    spread(ref, "legacy", 1.0, 50, metric=moved_to_empty, tag="v2")
    spread(ref, "rebuilt", 0.9, 50, metric=moved_to_empty, tag="v2")
    client.force_login(viewer)
    with CaptureQueriesContext(connection) as context:
        page = client.get("/metrics/compare/", PARAMS).content.decode()
    assert 'id="previous-version-offer"' not in page
    assert not any('version" <' in q["sql"] for q in context.captured_queries)


@pytest.mark.parametrize("days", [1, 9])
def test_the_comparison_page_runs_constant_queries(client, viewer, ref, days):
    client.force_login(viewer)
    spread(ref, "legacy", 1.0, 50, hours=24 * days)
    spread(ref, "rebuilt", 0.8, 50, hours=24 * days)
    client.get("/metrics/compare/", PARAMS)  # warm caches
    with CaptureQueriesContext(connection) as small:
        client.get("/metrics/compare/", PARAMS)
    spread(ref, "legacy", 1.0, 2000, hours=24 * days, tag="more")
    spread(ref, "rebuilt", 0.8, 2000, hours=24 * days, tag="more")
    with CaptureQueriesContext(connection) as large:
        client.get("/metrics/compare/", PARAMS)
    assert len(large) == len(small) <= 14


# --- activation asks first -----------------------------------------------------------------------------


@pytest.fixture
def draft(ref):
    return definition(key="latency", version=2, status="draft", excludes=["queueing"])


def test_activating_a_version_without_data_warns_and_needs_the_explicit_tick(
    client, metric_owner, ref, draft
):
    client.force_login(metric_owner)
    page = client.get("/metrics/latency@2/activate/").content.decode()
    warning = page.split('id="empty-version-warning"')[1].split("</div>")[0]
    assert "latency@2 has no observations yet" in warning
    assert "the comparison page will be empty until data arrives for latency@2" in warning
    assert 'name="confirm_empty"' in page and "Activate latency@2 with no data" in page

    refused = client.post("/metrics/latency@2/activate/")
    assert refused.status_code == 400
    assert "tick the box to activate it anyway" in refused.content.decode()
    draft.refresh_from_db()
    assert draft.status == "draft"

    done = client.post("/metrics/latency@2/activate/", {"confirm_empty": "1"}, follow=True)
    assert "the comparison page is empty until they arrive" in done.content.decode()
    draft.refresh_from_db()
    assert draft.status == "active"


def test_activating_a_version_with_data_asks_nothing_more(client, metric_owner, ref, draft):
    spread(ref, "rebuilt", 0.8, 10, metric=draft)
    client.force_login(metric_owner)
    page = client.get("/metrics/latency@2/activate/").content.decode()
    assert 'id="empty-version-warning"' not in page and 'name="confirm_empty"' not in page
    client.post("/metrics/latency@2/activate/")
    draft.refresh_from_db()
    assert draft.status == "active"


# --- the registry at phone width -----------------------------------------------------------------------


def test_registry_rows_become_cards_that_keep_the_status(client, viewer, ref):
    client.force_login(viewer)
    page = client.get("/metrics/").content.decode()
    assert '<table class="cards registry-table">' in page
    row = page.split("<tbody>")[1].split("</tr>")[0]
    assert '<td data-label="Status" class="key"><span class="badge active">active</span>' in row
    for label in ("Metric", "Unit", "Direction", "Boundary", "Team"):
        assert f'data-label="{label}"' in row
    assert "css/registry.css" in page
