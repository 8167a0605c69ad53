"""Pages and list endpoints run a constant number of queries whatever the data size."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from metrics.models import Observation
from metrics.rollups.maintain import rollups_rebuild
from tests.metrics.factories import definition, reference_data


def grow(ref, size: int) -> None:
    for i in range(size):
        definition(key=f"metric-{size}-{i}", start_event=f"s{size}-{i}")
    start = timezone.now() - timedelta(days=3)
    Observation.objects.bulk_create(
        Observation(
            definition=ref["latency"],
            system=ref["legacy" if i % 2 else "rebuilt"],
            workload=ref["medium" if i % 3 else "large"],
            value=1.0 + i % 11,
            unit="s",
            observed_at=start + timedelta(minutes=i),
            run_id=f"r{size}-{i}",
        )
        for i in range(size * 20)
    )
    rollups_rebuild(definition_ids=[ref["latency"].pk])  # written directly: the charts read the rollups


def count_queries(fetch) -> int:
    with CaptureQueriesContext(connection) as context:
        response = fetch()
    assert response.status_code == 200
    return len(context.captured_queries)


@pytest.mark.parametrize(
    "path",
    [
        "/metrics/",
        "/metrics/latency/",
        "/metrics/compare/?metric=latency&baseline=legacy&candidate=rebuilt",
        "/metrics/compare/?metric=latency&baseline=legacy&candidate=rebuilt&group_by=host&tags=k%3Dv",
        "/api/v1/definitions/",
        "/api/v1/observations/?metric=latency",
        "/api/v1/comparisons/?metric=latency&baseline=legacy&candidate=rebuilt",
        "/api/v1/comparisons/?metric=latency&baseline=legacy&candidate=rebuilt&group_by=host&tags.k=v",
        "/api/v1/systems/",
        "/api/v1/workloads/",
    ],
)
@pytest.mark.django_db
def test_constant_queries(client, viewer, path):
    ref = reference_data()
    client.force_login(viewer)
    grow(ref, 2)
    client.get(path)  # warm process-wide caches (content types) so both counts see the same state
    small = count_queries(lambda: client.get(path))
    grow(ref, 40)
    client.get(path)  # new references replaced cached names (metrics.reference_names): warm again
    large = count_queries(lambda: client.get(path))
    assert large == small, f"{path}: {small} queries on small data, {large} on large"
    assert small <= 14


@pytest.mark.parametrize(
    "path",
    [
        "/metrics/latency/",
        "/metrics/compare/?metric=latency&baseline=legacy&candidate=rebuilt&statistic=distribution",
        "/api/v1/comparisons/?metric=latency&baseline=legacy&candidate=rebuilt",
    ],
)
@pytest.mark.django_db
def test_constant_queries_from_rollups(client, viewer, path, settings):
    """Over the rollup threshold the comparisons read the day rollups: still a constant count."""
    settings.ROLLUP_THRESHOLD = 5
    ref = reference_data()
    client.force_login(viewer)
    grow(ref, 2)
    client.get(path)
    small = count_queries(lambda: client.get(path))
    grow(ref, 40)
    with CaptureQueriesContext(connection) as context:
        response = client.get(path)
    assert response.status_code == 200
    assert len(context.captured_queries) == small
    assert "metrics_observationrollup" in " ".join(q["sql"] for q in context.captured_queries)
    if "compar" in path:
        # From the rollups, or (where their buckets cannot settle the verdict) the rows after them:
        # one more statement, psycopg's binary exact read, which Django does not count.
        body = response.content.decode()
        assert (
            "Approximate: read from the day rollups" in body
            or "the rollups could not tell" in body
            or response.json()["approximate"]
        )
