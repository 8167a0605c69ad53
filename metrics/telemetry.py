"""The registry's gauges on /metrics, computed when Prometheus scrapes, from the database rather than from
process memory. Registered with core's scrape endpoint from MetricsConfig.ready (core never imports metrics)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from metrics.selectors.feeds import feeds_list


class FeedAgeCollector(Collector):
    """The age of the newest observation per feed (metric × system × source): one grouped query."""

    def collect(self) -> Iterator[Metric]:
        age = GaugeMetricFamily(
            "rebuild_feed_newest_observation_age_seconds",
            "Seconds since the newest value's observed_at (an observation or an OTLP histogram point), per "
            "metric, system and source.",
            labels=["metric", "system", "source"],
        )
        stale = GaugeMetricFamily(
            "rebuild_feed_stale",
            "1 when the feed has sent nothing for 3× its expected interval, else 0.",
            labels=["metric", "system", "source"],
        )
        for feed in feeds_list():
            labels = [feed.metric, feed.system, feed.source_label]
            age.add_metric(labels, max(feed.age.total_seconds(), 0.0))
            stale.add_metric(labels, 1.0 if feed.stale else 0.0)
        yield age
        yield stale

    def describe(self) -> list[Metric]:
        return []  # no collect() at registration time: the database may not be reachable yet
