"""A comparison asked for by keys, as the API and the comparison page both ask: one set of rules.

`ComparisonInput` is the query's contract (parsing, ranges, cross-field rules); the API also lists it
as its OpenAPI parameters. A bad query raises DRF's ValidationError or an ApplicationError naming the
field, whoever asked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from rest_framework import serializers

from core.errors import ApplicationError
from metrics.boundary import definition_changes
from metrics.models import ComparedStatistic, MetricDefinition, System, Workload
from metrics.selectors.comparison.compute import (
    DEFAULT_ALPHA,
    DEFAULT_MIN_SAMPLES,
    Comparison,
    comparison_compute,
)
from metrics.selectors.comparison.tags import group_by_check, tag_filters_from_query
from metrics.selectors.registry import definition_resolve


class ComparisonInput(serializers.Serializer[dict[str, Any]]):
    metric = serializers.CharField(help_text="key (active version) or key@N")
    candidate_metric = serializers.CharField(
        required=False,
        help_text="Only to check comparability: a different version or key is refused with why.",
    )
    baseline = serializers.SlugField()
    candidate = serializers.SlugField()
    workload = serializers.SlugField(required=False, help_text="Omitted: every workload, pooled.")
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    statistic = serializers.ChoiceField(
        choices=ComparedStatistic.choices,
        required=False,
        help_text="Default: the definition's statistic. 'distribution' tests a whole-distribution shift.",
    )
    alpha = serializers.FloatField(required=False, min_value=1e-6, max_value=0.5, default=DEFAULT_ALPHA)
    min_samples = serializers.IntegerField(
        required=False, min_value=2, max_value=1_000_000, default=DEFAULT_MIN_SAMPLES
    )

    group_by = serializers.CharField(
        required=False,
        help_text="A tag key: one comparison per value of it present on both sides (at most 20), "
        "besides the pooled one. Reads exact rows, never the day rollups.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["baseline"] == attrs["candidate"]:
            raise serializers.ValidationError(
                {"candidate": "Baseline and candidate must be different systems."}
            )
        if attrs.get("since") and attrs.get("until") and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError({"until": "until must be after since."})
        return attrs


@dataclass(frozen=True)
class ComparisonQuery:
    """A comparison query with its keys resolved: what `comparison_compute` takes, kept so a page can
    read more about the same series (its chart, the previous version) without resolving it again."""

    definition: MetricDefinition
    baseline: System
    candidate: System
    workload: Workload | None
    since: datetime | None
    until: datetime | None
    statistic: str | None
    alpha: float
    min_samples: int
    tag_filters: dict[str, list[str]]
    group_by: str | None

    def compute(self) -> Comparison:
        """The answer of a page or an API request: an exact re-read is capped (compute.py)."""
        return comparison_compute(
            definition=self.definition,
            baseline=self.baseline,
            candidate=self.candidate,
            workload=self.workload,
            since=self.since,
            until=self.until,
            statistic=self.statistic,
            alpha=self.alpha,
            min_samples=self.min_samples,
            tag_filters=self.tag_filters,
            group_by=self.group_by,
            reread_max_rows=settings.COMPARISON_REREAD_MAX_ROWS,
        )


def comparison_from_query(
    params: Mapping[str, str], *, resolved: Callable[[ComparisonQuery], object] | None = None
) -> Comparison:
    """`params` may repeat `tags.<key>` (a QueryDict): values of one key are OR'ed, keys AND'ed.
    `resolved` is handed the query with its keys resolved, for a caller that reads more of the same
    series (the page's chart) without resolving them again."""
    query = comparison_query(params)
    if resolved is not None:
        resolved(query)
    return query.compute()


def comparison_query(params: Mapping[str, str]) -> ComparisonQuery:
    """The query checked and its keys resolved (a bad one raises, naming the field); nothing computed."""
    query = ComparisonInput(data=params)
    query.is_valid(raise_exception=True)
    data = query.validated_data
    tag_filters = tag_filters_from_query(params)
    group_by = group_by_check(data.get("group_by"))
    definition = definition_resolve(data["metric"])
    if data.get("candidate_metric"):
        other = definition_resolve(data["candidate_metric"], field="candidate_metric")
        _refuse_incomparable(definition, other)
    systems = {s.key: s for s in System.objects.filter(key__in=[data["baseline"], data["candidate"]])}
    for side in ("baseline", "candidate"):
        if data[side] not in systems:
            raise ApplicationError(f"Unknown system '{data[side]}'.", status=400, field=side)
    workload = None
    if data.get("workload"):
        workload = Workload.objects.filter(key=data["workload"]).first()
        if workload is None:
            raise ApplicationError(f"Unknown workload '{data['workload']}'.", status=400, field="workload")
    return ComparisonQuery(
        definition=definition,
        baseline=systems[data["baseline"]],
        candidate=systems[data["candidate"]],
        workload=workload,
        since=data.get("since"),
        until=data.get("until"),
        statistic=data.get("statistic"),
        alpha=data["alpha"],
        min_samples=data["min_samples"],
        tag_filters=tag_filters,
        group_by=group_by,
    )


def _refuse_incomparable(definition: MetricDefinition, other: MetricDefinition) -> None:
    if other.pk == definition.pk:
        return
    if other.key != definition.key:
        raise ApplicationError(
            f"{definition.ref} and {other.ref} are different metrics and cannot be compared.",
            status=400,
            field="candidate_metric",
        )
    changes = definition_changes(definition, other)
    raise ApplicationError(
        f"{definition.ref} and {other.ref} are different versions and measure differently"
        + (f" ({'; '.join(changes)})" if changes else "")
        + ": compare within one version.",
        status=400,
        field="candidate_metric",
    )
