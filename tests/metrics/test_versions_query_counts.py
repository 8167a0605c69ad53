"""The version pages run a constant number of queries, however many versions, rows and gates."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.metrics.factories import definition
from tests.program.factories import make_program, metrics_for_template, observe, spread

PAGES = [
    ("get", "/metrics/step-time@1/", None),
    ("get", "/metrics/step-time@2/", None),
    ("get", "/metrics/step-time/", None),
    ("get", "/metrics/", None),
    ("get", "/metrics/new/", None),
    ("get", "/metrics/step-time/versions/new/", None),
    ("post", "/metrics/step-time/versions/new/", "preview"),
    ("get", "/metrics/step-time@2/activate/", None),
    ("get", "/metrics/step-time@1/deprecate/", None),
]


def grow(world, lead, size: int) -> None:
    """More programs pinning step-time@1, more rows on both versions, and older drafts."""
    for i in range(size):
        make_program(lead, slug=f"rebuild-{size}-{i}")
        observe(world["step"], world["rebuilt"], world["large"], spread(10.0, 20), tag=f"v1-{size}-{i}-")
        observe(world["draft"], world["legacy"], world["medium"], spread(9.0, 20), tag=f"v2-{size}-{i}-")
    definition(key=f"other-{size}", status="draft", start_event=f"o{size}")


def count(client, method: str, path: str, data) -> int:
    with CaptureQueriesContext(connection) as context:
        response = getattr(client, method)(path, data or {})
    assert response.status_code == 200, (path, response.status_code)
    return len(context.captured_queries)


@pytest.mark.parametrize(("method", "path", "body"), PAGES)
@pytest.mark.django_db
def test_version_pages_run_constant_queries(client, metric_owner, lead, method, path, body):
    world = metrics_for_template()
    world["draft"] = definition(key="step-time", version=2, status="draft", unit="ms", excludes=["warmup"])
    data = None
    if body == "preview":
        step = world["step"]
        data = {
            f: getattr(step, f)
            for f in ("name", "unit", "direction", "statistic", "sampling", "start_event", "end_event")
        }
        data.update(owner_team=step.owner_team, excludes=["data_loading"])
    client.force_login(metric_owner)
    grow(world, lead, 1)
    getattr(client, method)(path, data or {})  # warm process-wide caches
    small = count(client, method, path, data)
    grow(world, lead, 6)
    large = count(client, method, path, data)
    assert large == small, f"{path}: {small} queries on small data, {large} on large"
    assert small <= 16
