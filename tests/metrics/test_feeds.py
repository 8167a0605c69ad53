"""Feeds: the newest value per metric × system × source, staleness, and one notice per stale spell."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.models import Notification, NotificationReceipt
from metrics.models import FeedState, HistogramPoint, Observation
from metrics.selectors.feeds import feeds_list
from metrics.services.feeds import feeds_check_stale
from tests.conftest import make_user
from tests.metrics.factories import definition, reference_data


def observe(metric, system, workload, *, age: timedelta, source: str = "", run: str = "r") -> None:
    Observation.objects.create(
        definition=metric,
        system=system,
        workload=workload,
        value=1.0,
        unit=metric.unit,
        observed_at=timezone.now() - age,
        run_id=f"{run}-{age.total_seconds()}",
        source=source,
    )


def histogram(metric, system, workload, *, age: timedelta, source: str = "otlp") -> None:
    """An OTLP histogram point, as the receiver stores one (metrics/ingest/formats/histograms.py)."""
    HistogramPoint.objects.create(
        definition=metric,
        system=system,
        workload=workload,
        observed_at=timezone.now() - age,
        stream=f"s-{age.total_seconds()}",
        count=3,
        sum=3.0,
        lows=[0.0],
        highs=[5.0],
        counts=[3],
        unit=metric.unit,
        source=source,
    )


@pytest.fixture
def feeds(db):
    ref = reference_data()  # latency: per_request, so expected hourly → stale after 3 h
    observe(ref["latency"], ref["rebuilt"], ref["medium"], age=timedelta(minutes=20))
    observe(ref["latency"], ref["rebuilt"], ref["large"], age=timedelta(hours=2))  # older, same feed
    observe(ref["latency"], ref["legacy"], ref["medium"], age=timedelta(hours=5))  # stale
    observe(ref["latency"], ref["legacy"], ref["medium"], age=timedelta(minutes=1), source="otlp")
    runs = definition(
        key="eval-score", unit="dimensionless", sampling="per_run", owner_team="training-platform"
    )
    observe(runs, ref["rebuilt"], ref["medium"], age=timedelta(days=60))  # per run: never stale
    return ref


# The fixture's feeds: (metric, system, source).
SEEDED = {
    ("eval-score@1", "rebuilt", "batch"),
    ("latency@1", "legacy", "batch"),
    ("latency@1", "legacy", "otlp"),
    ("latency@1", "rebuilt", "batch"),
}


def test_each_feed_is_its_newest_value_and_stale_after_three_intervals(feeds):
    listed = {(f.metric, f.system, f.source_label): f for f in feeds_list()}
    assert set(listed) == SEEDED
    assert timedelta(minutes=19) < listed["latency@1", "rebuilt", "batch"].age < timedelta(minutes=21)
    assert [key for key, feed in listed.items() if feed.stale] == [("latency@1", "legacy", "batch")]
    assert listed["eval-score@1", "rebuilt", "batch"].interval is None


def test_an_expected_interval_on_the_definition_overrides_the_sampling_default(feeds):
    feeds["latency"].expected_interval = timedelta(minutes=5)
    feeds["latency"].save()
    stale = {(f.system, f.source_label) for f in feeds_list() if f.stale}
    assert stale == {("rebuilt", "batch"), ("legacy", "batch")}  # 20 min > 3 × 5 min; otlp is 1 min old


def test_a_histogram_only_feed_is_listed_and_goes_stale_and_the_newest_of_both_tables_counts(feeds):
    """OTel histograms arrive as histogram points, not observations: their feed is watched the same."""
    histogram(feeds["latency"], feeds["rebuilt"], feeds["medium"], age=timedelta(hours=4))  # only histograms
    # Older than the observation of its feed: the feed's newest value stays the observation's.
    histogram(feeds["latency"], feeds["legacy"], feeds["medium"], age=timedelta(hours=9))
    listed = {(f.metric, f.system, f.source_label): f for f in feeds_list()}
    assert set(listed) == SEEDED | {("latency@1", "rebuilt", "otlp")}
    assert listed["latency@1", "rebuilt", "otlp"].stale
    assert listed["latency@1", "legacy", "otlp"].age < timedelta(minutes=2)
    feeds_check_stale()
    assert FeedState.objects.filter(
        source="otlp", system=feeds["rebuilt"], stale_since__isnull=False
    ).exists()


def test_the_owner_team_is_told_once_per_stale_spell(feeds):
    team = Group.objects.get_or_create(name="data-platform")[0]
    owner = make_user("dana", team.name)
    make_user("outsider")
    assert feeds_check_stale() == {"opened": 1, "closed": 0}
    notice = Notification.objects.get(event="feed.stale")
    assert "latency@1" in notice.subject and "legacy (batch)" in notice.subject
    assert notice.link == "/metrics/feeds/"
    assert list(NotificationReceipt.objects.values_list("user__username", flat=True)) == [owner.username]

    assert feeds_check_stale() == {"opened": 0, "closed": 0}  # same spell: no second notice
    assert Notification.objects.filter(event="feed.stale").count() == 1

    observe(feeds["latency"], feeds["legacy"], feeds["large"], age=timedelta(minutes=1))
    assert feeds_check_stale() == {"opened": 0, "closed": 1}  # values arrived: the spell ends
    assert not FeedState.objects.exists()

    Observation.objects.filter(system=feeds["legacy"], source="").update(
        observed_at=timezone.now() - timedelta(hours=4)
    )
    assert feeds_check_stale() == {"opened": 1, "closed": 0}  # a new spell: told again
    assert Notification.objects.filter(event="feed.stale").count() == 2


def test_feeds_page_lists_every_active_metric_and_flags_stale_feeds(client, viewer, feeds):
    definition(key="never-sent", unit="s")
    client.force_login(viewer)
    response = client.get("/metrics/feeds/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "1 stale</span> of 4 feeds" in text
    assert text.count('class="is-stale"') == 1
    assert "otlp" in text
    assert "Never-Sent" in text and "No values yet." in text
    assert "no expected interval: never stale" in text  # eval-score, per run


def test_feeds_page_runs_a_constant_number_of_queries(client, viewer, feeds):
    client.force_login(viewer)

    def count() -> int:
        with CaptureQueriesContext(connection) as context:
            assert client.get("/metrics/feeds/").status_code == 200
        return len(context.captured_queries)

    small = count()
    for i in range(6):
        metric = definition(key=f"grown-{i}", start_event=f"g{i}")
        for system in ("legacy", "rebuilt"):
            observe(metric, feeds[system], feeds["medium"], age=timedelta(hours=i), source=f"s{i}")
            histogram(metric, feeds[system], feeds["medium"], age=timedelta(hours=i))
    assert count() == small


@pytest.mark.parametrize(
    ("interval", "words"),
    [
        (timedelta(hours=1), "1 h"),
        (timedelta(days=2), "2 days"),
        (timedelta(minutes=15), "15 min"),
        (None, ""),
    ],
)
def test_intervals_read_as_words(interval, words):
    from metrics.selectors.feeds import interval_words

    assert interval_words(interval) == words


def test_ages_read_short(feeds):
    ages = {(f.metric, f.system, f.source_label): f.age_words for f in feeds_list()}
    assert ages["latency@1", "rebuilt", "batch"] == "20 min"
    assert ages["latency@1", "legacy", "batch"] == "5 h"
    assert ages["eval-score@1", "rebuilt", "batch"] == "60 days"


def test_a_metric_owner_sets_the_expected_interval_through_the_api_and_it_is_audited(
    as_user, metric_owner, feeds
):
    response = as_user(metric_owner).patch(
        "/api/v1/definitions/latency/versions/1/", {"expected_interval": "00:10:00"}, format="json"
    )
    assert response.status_code == 200, response.json()
    feeds["latency"].refresh_from_db()
    assert feeds["latency"].expected_interval == timedelta(minutes=10)
    from core.models import Transition

    edit = Transition.objects.get(action="edited")
    assert edit.data["changes"] == ["expected interval: — → 0:10:00"]
