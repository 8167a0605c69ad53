"""Comparisons say when they pool points of different sampling (issue 26, item 2): a pull source whose
point kind does not fit the metric's sampling wrote rows that are aggregates among samples, or the
reverse; the answer (API and page) says how many on which side, and `sampling_mixed` is true."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from metrics.ingest import observations_ingest_rows
from metrics.models import PullSource
from metrics.pulled_rows import INGEST_SOURCE, run_id_prefix
from tests.metrics.factories import definition, row

pytestmark = pytest.mark.django_db
URL = "/api/v1/comparisons/"


def source_of(ref, point_kind: str, metric: str = "latency") -> PullSource:
    """Made as it stands in the table: one from before point kinds (migrated as aggregate), or one
    whose metric got a version sampled otherwise, disagrees with the metric; the service would refuse
    to register it so."""
    source = PullSource.objects.create(
        definition=ref[metric],
        system=ref["rebuilt"],
        base_url="http://prometheus.internal:9090",
        query='avg(rate(request_seconds_sum{{workload="{workload}"}}[1m]))',
        point_kind=point_kind,
    )
    source.workloads.set([ref["medium"]])
    return source


def push(system: str, n: int, *, metric: str = "latency", start: int = 0, mean: float = 0.5, **extra) -> None:
    rng = random.Random(f"{system}{n}{start}")
    rows = [
        row(
            start + i,
            metric=metric,
            system=system,
            value=abs(rng.gauss(mean, 0.05)),
            run_id=f"{system}-{start + i}",
        )
        | extra
        for i in range(n)
    ]
    observations_ingest_rows(rows=rows, actor=None, source=extra.get("source", ""))


def pull(source: PullSource, n: int, *, start: int, **extra) -> None:
    """Rows as metrics.services.pull writes them: source 'prometheus', run_id `prom-<id>-<labels hash>`."""
    rows = [
        row(
            start + i,
            metric=source.definition.key,
            system=source.system.key,
            value=0.5 + 0.001 * i,
            run_id=f"{run_id_prefix(source.pk)}0123abcd",
            source=INGEST_SOURCE,
            tags={"job": "trainer"},
        )
        | extra
        for i in range(n)
    ]
    observations_ingest_rows(rows=rows, actor=None, source=INGEST_SOURCE)


def compare(client, **params) -> dict:
    response = client.get(URL, {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt", **params})
    assert response.status_code == 200, response.json()
    return response.json()


def test_pulled_aggregates_pooled_with_pushed_samples_are_said(ref, as_user, viewer):
    source = source_of(ref, "aggregate")  # latency is sampled per_request
    push("legacy", 200)
    push("rebuilt", 120)
    pull(source, 80, start=1000)

    answer = compare(as_user(viewer))

    assert answer["candidate"]["n"] == 200  # pooled, as before: the answer says so, it does not hide rows
    assert answer["sampling_mixed"] is True
    assert (
        f"80 of 200 rows on rebuilt are aggregates over an interval (Prometheus pull source {source.pk}), "
        "pooled with its 120 other rows as if each were one request." in answer["warnings"]
    )
    assert any("latency@1 is sampled per_request" in w for w in answer["warnings"])


def test_a_side_of_aggregates_against_a_side_of_samples_is_said(ref, as_user, viewer):
    source = source_of(ref, "aggregate")
    push("legacy", 100)
    pull(source, 100, start=1000)

    answer = compare(as_user(viewer))

    assert answer["sampling_mixed"] is True
    assert any(
        "100 of 100 rows on rebuilt" in w and "every row on that side" in w for w in answer["warnings"]
    )


def test_a_source_that_fits_pools_nothing_to_warn_about(ref, as_user, viewer):
    source = source_of(ref, "sample")
    push("legacy", 100)
    push("rebuilt", 60)
    pull(source, 40, start=1000)

    answer = compare(as_user(viewer))

    assert answer["sampling_mixed"] is False and answer["warnings"] == []
    assert answer["candidate"]["n"] == 100


def test_the_window_and_the_tag_filters_decide_which_rows_are_pooled(ref, as_user, viewer):
    source = source_of(ref, "aggregate")
    push("legacy", 50)
    push("rebuilt", 50, tags={"job": "pusher"})
    pull(source, 50, start=5000)  # rows 5000 s back and older; the pushed are the newest 50 s
    client = as_user(viewer)
    recent = (timezone.now() - timedelta(minutes=10, seconds=100)).isoformat()

    assert compare(client)["sampling_mixed"] is True
    assert compare(client, since=recent)["sampling_mixed"] is False
    assert compare(client, **{"tags.job": "pusher"})["sampling_mixed"] is False
    assert compare(client, **{"tags.job": "trainer"})["warnings"] != []


def test_pulled_samples_among_interval_values_are_said(ref, as_user, viewer):
    ref["utilisation"] = definition(
        key="utilisation", unit="percent", sampling="per_interval", direction="higher_is_better"
    )
    source = source_of(ref, "sample", metric="utilisation")
    push("legacy", 60, metric="utilisation", unit="percent", mean=70)
    push("rebuilt", 60, metric="utilisation", unit="percent", mean=75)
    pull(source, 30, start=1000, unit="percent")

    answer = compare(as_user(viewer), metric="utilisation")

    assert answer["sampling_mixed"] is True
    assert any(
        "30 of 90 rows on rebuilt are single samples" in w
        and "as if each sample were one interval's value" in w
        for w in answer["warnings"]
    )


def test_the_comparison_page_shows_the_warning(ref, client, viewer):
    source = source_of(ref, "aggregate")
    push("legacy", 40)
    push("rebuilt", 40)
    pull(source, 40, start=1000)
    client.force_login(viewer)

    page = client.get(
        "/metrics/compare/", {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt"}
    )

    assert "40 of 80 rows on rebuilt are aggregates over an interval" in page.content.decode()
