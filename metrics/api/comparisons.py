"""Metrics API: comparisons — old vs new on one metric version."""

from __future__ import annotations

from typing import Any, cast

from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from core.api.renderers import CSVRenderer, csv_lines
from metrics import selectors
from metrics.selectors.comparison import ComparisonInput


class SideOutput(serializers.Serializer[dict[str, Any]]):
    system = serializers.CharField()
    n = serializers.IntegerField()
    mean = serializers.FloatField(allow_null=True)
    p50 = serializers.FloatField(allow_null=True)
    p90 = serializers.FloatField(allow_null=True)
    p95 = serializers.FloatField(allow_null=True)
    p99 = serializers.FloatField(allow_null=True)
    min = serializers.FloatField(allow_null=True)
    max = serializers.FloatField(allow_null=True)
    value = serializers.FloatField(allow_null=True, help_text="The compared statistic on this side.")
    ci = serializers.ListField(
        child=serializers.FloatField(),
        min_length=2,
        max_length=2,
        allow_null=True,
        help_text="The (1 − alpha) interval of this side's statistic; null where none can be formed.",
    )
    bounds = serializers.DictField(
        child=serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2),
        allow_null=True,
        help_text="A side with OTLP histogram points: statistic (p50…p99, min, max) → [low, high], "
        "where its true value certainly lies (the buckets holding its ranks); null otherwise.",
    )


class ComparisonCoreOutput(serializers.Serializer[dict[str, Any]]):
    metric = serializers.CharField()
    unit = serializers.CharField()
    direction = serializers.CharField()
    statistic = serializers.CharField()
    workload = serializers.CharField(allow_null=True)
    since = serializers.DateTimeField(allow_null=True)
    until = serializers.DateTimeField(allow_null=True)
    baseline = SideOutput()
    candidate = SideOutput()
    relative_performance = serializers.FloatField(allow_null=True, help_text="> 1: the candidate is better.")
    relative_performance_ci = serializers.ListField(
        child=serializers.FloatField(), min_length=2, max_length=2, allow_null=True
    )
    change_pct = serializers.FloatField(allow_null=True)
    improvement_pct = serializers.FloatField(allow_null=True)
    method = serializers.CharField(
        help_text="order-statistic | welch-fieller | mann-whitney | none, then which read answered: "
        "nothing more for the rows; ' (rollups)' for the day rollups (quantile intervals read to the "
        "buckets' edges, so they contain the exact ones); ' (rows: the rollups could not tell)' where "
        "the buckets could not settle the verdict and the rows were read exactly; ' (histogram "
        "buckets)' for OTLP histogram points; ': cannot tell at the buckets' accuracy' appended where "
        "no exact read was possible or it was over COMPARISON_REREAD_MAX_ROWS rows (verdict "
        "insufficient_data; `warnings` says which)."
    )
    p_value = serializers.FloatField(
        allow_null=True, help_text="One-sided, H1: the candidate is better; null where no test applies."
    )
    effect_size = serializers.FloatField(allow_null=True)
    alpha = serializers.FloatField()
    significant = serializers.BooleanField(help_text="The verdict is better or worse at alpha.")
    min_samples = serializers.IntegerField()
    verdict = serializers.ChoiceField(choices=["better", "worse", "no_difference", "insufficient_data"])
    reason = serializers.CharField()
    approximate = serializers.BooleanField(
        help_text="Answered from the day rollups (a side has more rows than the rollup threshold: the "
        "whole UTC days inside since/until, plus the rows of the partial days at either end, so n is "
        "exactly the window's rows), or from OTLP histogram buckets (each side's `bounds` say where its "
        "quantiles lie). Either way quantile intervals reach the buckets' edges and contain the exact "
        "ones. False where the rows answered, including after the buckets could not tell (`method`)."
    )
    accuracy = serializers.FloatField(
        allow_null=True,
        help_text="Where approximate: the relative error bound of every value, quantile and interval "
        "bound (rollups); of every quantile, min and max (histogram buckets: half the widest bracket "
        "over its nearest edge to 0; null when a bracket is open or holds 0).",
    )
    tags = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="The tag filters read: key → values (OR within a key, AND across keys).",
    )
    warnings = serializers.ListField(
        child=serializers.CharField(),
        help_text="What the reader should know: pooled workloads of different sizes, a capped side, "
        "groups left out, points of different sampling pooled.",
    )
    sampling_mixed = serializers.BooleanField(
        help_text="A side pools points of different kinds (a pull source's aggregates over an interval "
        "among single samples, or the reverse), or the two sides differ in kind; `warnings` says where.",
    )


class GroupOutput(serializers.Serializer[dict[str, Any]]):
    value = serializers.CharField(help_text="The group-by tag's value.")
    comparison = ComparisonCoreOutput()


class ComparisonOutput(ComparisonCoreOutput):
    group_by = serializers.CharField(allow_null=True)
    groups = GroupOutput(many=True, help_text="One comparison per group value present on both sides.")
    groups_omitted = serializers.IntegerField(help_text="Groups beyond the cap of 20, left out.")


TAG_PARAMETER = OpenApiParameter(
    "tags.<key>",
    str,
    description="Filter by a tag: `tags.severity=sev1&tags.severity=sev2&tags.cluster=a` keeps rows whose "
    "severity is sev1 or sev2 and whose cluster is a (text tags). Tag-filtered comparisons read exact "
    "rows (at most the rollup threshold per side, the newest).",
    many=True,
)


@extend_schema(tags=["metrics"], parameters=[ComparisonInput, TAG_PARAMETER], responses=ComparisonOutput)
class ComparisonView(APIView):
    """Old vs new on one metric version: each side's statistic and interval, the ratio's interval, the verdict."""

    def get(self, request: Request) -> Response:
        return Response(
            ComparisonOutput(selectors.comparison_from_query(request.query_params).as_dict()).data
        )


# The answer's columns, repeated on each of its rows; then the side's own. One tidy table: a row per
# side of the pooled comparison (`group` empty) and of each group, so a spreadsheet or a data frame
# reads it without reshaping.
ANSWER_COLUMNS = [
    "metric",
    "unit",
    "statistic",
    "direction",
    "workload",
    "since",
    "until",
    "tags",
    "group_by",
    "group",
    "verdict",
    "significant",
    "relative_performance",
    "relative_performance_ci_low",
    "relative_performance_ci_high",
    "change_pct",
    "improvement_pct",
    "method",
    "p_value",
    "effect_size",
    "alpha",
    "min_samples",
    "approximate",
    "accuracy",
    "sampling_mixed",
    "reason",
    "warnings",
]
SIDE_COLUMNS = [
    "side",
    "system",
    "n",
    "value",
    "ci_low",
    "ci_high",
    "mean",
    "p50",
    "p90",
    "p95",
    "p99",
    "min",
    "max",
    "bounds",
]
COMPARISON_CSV_COLUMNS = [*ANSWER_COLUMNS, *SIDE_COLUMNS]


def comparison_csv_rows(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer as ComparisonOutput writes it, as rows: its baseline and candidate, then each group's."""
    group_by = answer.get("group_by")
    parts = [(None, answer)] + [(group["value"], group["comparison"]) for group in answer.get("groups", [])]
    rows = []
    for group, comparison in parts:
        shared = {column: comparison.get(column) for column in ANSWER_COLUMNS}
        interval = comparison["relative_performance_ci"] or (None, None)
        shared.update(
            group_by=group_by,
            group=group,
            relative_performance_ci_low=interval[0],
            relative_performance_ci_high=interval[1],
            warnings="; ".join(comparison["warnings"]),
        )
        for role in ("baseline", "candidate"):
            side = comparison[role]
            ci = side["ci"] or (None, None)
            rows.append({**shared, **side, "side": role, "ci_low": ci[0], "ci_high": ci[1]})
    return rows


@extend_schema(
    tags=["metrics"],
    parameters=[ComparisonInput, TAG_PARAMETER],
    responses={
        (200, "text/csv"): OpenApiResponse(
            OpenApiTypes.STR,
            description="A header row, then one row per side (baseline, candidate) of the comparison "
            "and of each group; each row repeats the answer's columns.",
        )
    },
)
class ComparisonExport(APIView):
    """GET /api/v1/comparisons/ as a CSV download: the same parameters, the same selector, the same
    numbers (in the definition's unit). The comparison page's "Download CSV" link is this view."""

    # The answer is CSV whatever is asked; these let `Accept: text/csv` and `?format=csv` in (not a 406
    # or 404), and write an error in the format asked for.
    renderer_classes = [*cast("list[type[BaseRenderer]]", api_settings.DEFAULT_RENDERER_CLASSES), CSVRenderer]

    def get(self, request: Request) -> HttpResponse:
        result = selectors.comparison_from_query(request.query_params)
        answer = ComparisonOutput(result.as_dict()).data
        response = HttpResponse(
            b"".join(csv_lines(COMPARISON_CSV_COLUMNS, [comparison_csv_rows(answer)])),
            content_type="text/csv; charset=utf-8",
        )
        response["Content-Disposition"] = f'attachment; filename="{_export_name(result)}"'
        return response


def _export_name(result: selectors.Comparison) -> str:
    """comparison_<metric>_<baseline>-vs-<candidate>_<since or start>_<until or the day of the export>.csv"""
    since, until = result.since, result.until
    return (
        "_".join(
            [
                "comparison",
                result.metric,
                f"{result.baseline.system}-vs-{result.candidate.system}",
                f"{since:%Y-%m-%d}" if since else "start",
                f"{until or timezone.now():%Y-%m-%d}",
            ]
        )
        + ".csv"
    )
