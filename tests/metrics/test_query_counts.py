"""Pages and list endpoints run a constant number of queries whatever the data size."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from metrics.models import Observation
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
        "/api/v1/definitions/",
        "/api/v1/observations/?metric=latency",
        "/api/v1/comparisons/?metric=latency&baseline=legacy&candidate=rebuilt",
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
