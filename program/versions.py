"""Which metric versions a gate's criteria pin, against the versions their keys have now.

A criterion is stale when it pins a non-active version of a key that has an active version: re-pinning
moves it there (program.services.criteria.gate_repin). The gate page shows the same moves before
anyone re-pins, from the versions it read once for all criteria (`current_versions`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from metrics.models import MetricDefinition
from metrics.public import series_present
from program.models import Criterion


@dataclass(frozen=True)
class Move:
    criterion: Criterion
    source: MetricDefinition
    to: MetricDefinition

    def as_record(self) -> dict[str, Any]:
        return {
            "criterion": self.criterion.name,
            "id": self.criterion.pk,
            "from": self.source.ref,
            "to": self.to.ref,
        }


def pinned_keys(criteria: Iterable[Criterion]) -> set[str]:
    """Keys of the metrics the criteria pin (an unbound or manual criterion pins none)."""
    return {c.metric.key for c in criteria if c.metric is not None}


def current_versions(criteria: Iterable[Criterion]) -> list[MetricDefinition]:
    """Every draft and active version of the criteria's metric keys, each marked `has_observations`;
    two queries (none when no criterion pins a metric)."""
    keys = pinned_keys(criteria)
    if not keys:
        return []
    versions = list(
        MetricDefinition.objects.filter(
            key__in=sorted(keys),
            status__in=[MetricDefinition.Status.DRAFT, MetricDefinition.Status.ACTIVE],
        ).order_by("key", "version")
    )
    present = series_present([v.pk for v in versions])
    for version in versions:
        version.has_observations = (version.pk, None) in present  # type: ignore[attr-defined]
    return versions


def active_of(versions: Iterable[MetricDefinition]) -> dict[str, MetricDefinition]:
    return {v.key: v for v in versions if v.status == MetricDefinition.Status.ACTIVE}


def active_versions(keys: Iterable[str]) -> dict[str, MetricDefinition]:
    """key → its active version, for the keys that have one; one query."""
    keys = sorted(set(keys))
    if not keys:
        return {}
    return active_of(MetricDefinition.objects.filter(key__in=keys, status=MetricDefinition.Status.ACTIVE))


def stale_moves(criteria: Iterable[Criterion], active: Mapping[str, MetricDefinition]) -> list[Move]:
    """The criteria that pin a non-active version of a key with an active one, and where they move."""
    moves = []
    for criterion in criteria:
        metric = criterion.metric
        if metric is None or metric.status == MetricDefinition.Status.ACTIVE:
            continue
        target = active.get(metric.key)
        if target is not None and target.pk != metric.pk:
            moves.append(Move(criterion, metric, target))
    return moves
