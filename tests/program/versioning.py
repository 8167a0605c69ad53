"""Newer metric versions for the criteria tests, made with the ORM (the services have their own tests)."""

from __future__ import annotations

from metrics.models import MetricDefinition
from tests.metrics.factories import definition

COPIED = ("name", "unit", "direction", "statistic", "sampling", "start_event", "end_event", "owner_team")


def next_version(metric: MetricDefinition, *, status: str = "draft", **changes) -> MetricDefinition:
    fields = {name: getattr(metric, name) for name in COPIED}
    fields.update(excludes=["warmup"], **changes)
    return definition(key=metric.key, version=metric.version + 1, status=status, **fields)


def supersede(metric: MetricDefinition) -> MetricDefinition:
    """v(N+1) becomes the active version; vN is deprecated."""
    MetricDefinition.objects.filter(pk=metric.pk).update(status=MetricDefinition.Status.DEPRECATED)
    metric.refresh_from_db()
    return next_version(metric, status="active")
