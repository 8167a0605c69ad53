"""Prometheus pull sources API: metric owners say where a metric's numbers live per system."""

from __future__ import annotations

from typing import Any, cast

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from metrics.api import WRITE_RULES
from metrics.models import MetricDefinition, PointKind, PullSource, System
from metrics.services.pull_sources import (
    PullSourceFields,
    pull_source_create,
    pull_source_delete,
    pull_source_update,
)


class PullSourceOutput(serializers.ModelSerializer[PullSource]):
    metric = serializers.CharField(source="definition.key")
    system = serializers.CharField(source="system.key")
    workloads = serializers.SerializerMethodField()

    class Meta:
        model = PullSource
        fields = [
            "id",
            "metric",
            "system",
            "base_url",
            "query",
            "unit",
            "step_seconds",
            "point_kind",
            "workloads",
            "enabled",
            "last_pulled_at",
            "last_error",
            "last_error_at",
            "consecutive_failures",
            "created_at",
        ]

    def get_workloads(self, obj: PullSource) -> list[str]:
        return sorted(w.key for w in obj.workloads.all())


class PullSourceInput(serializers.Serializer[dict[str, Any]]):
    # URL, query and step are checked by the service (one rule set for API, admin and shell), so the
    # serializer only checks types here.
    base_url = serializers.CharField(max_length=300, help_text="Prometheus base URL, e.g. http://prom:9090")
    query = serializers.CharField(
        max_length=2000,
        help_text='PromQL with {workload} and {system} placeholders; PromQL\'s own braces doubled: {{job="x"}}.',
    )
    unit = serializers.CharField(
        max_length=40, required=False, allow_blank=True, help_text="Unit of the values."
    )
    step_seconds = serializers.IntegerField(
        required=False, help_text="Resolution of query_range, seconds (> 0)."
    )
    point_kind = serializers.ChoiceField(
        choices=PointKind.choices,
        required=False,
        help_text="What one point of the query is: `sample` (one request, step or run: a raw gauge) or "
        "`aggregate` (over an interval: rate(), avg(), histogram_quantile()), the default. It must fit "
        "the metric's sampling: sample for per_request, per_step and per_run; aggregate for per_interval.",
    )
    workloads = serializers.ListField(child=serializers.SlugField(max_length=80), help_text="Workload keys.")
    enabled = serializers.BooleanField(required=False)


class PullSourceCreateInput(PullSourceInput):
    metric = serializers.SlugField(max_length=80, help_text="Metric definition key.")
    system = serializers.SlugField(max_length=50, help_text="System key.")


def _definition(key: str) -> MetricDefinition:
    # The active version, else the newest: rows are ingested by key, so they follow the active version.
    versions = MetricDefinition.objects.filter(key=key).order_by("-version")
    definition = versions.filter(status=MetricDefinition.Status.ACTIVE).first() or versions.first()
    if definition is None:
        raise ApplicationError(f"Unknown metric '{key}'.", status=400, field="metric")
    return definition


def _system(key: str) -> System:
    system = System.objects.filter(key=key).first()
    if system is None:
        raise ApplicationError(f"Unknown system '{key}'.", status=400, field="system")
    return system


def _listed() -> QuerySet[PullSource]:
    return (
        PullSource.objects.select_related("definition", "system").prefetch_related("workloads").order_by("pk")
    )


@extend_schema(tags=["metrics"])
class PullSourceList(APIView):
    """Prometheus pull sources with their last pull and last failure; POST adds one (metric owners)."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["pull_source_write"]

    @extend_schema(responses=PullSourceOutput(many=True))
    def get(self, request: Request) -> Response:
        sources = _listed()
        if metric := request.query_params.get("metric"):
            sources = sources.filter(definition__key=metric)
        return Response(PullSourceOutput(sources, many=True).data)

    @extend_schema(
        request=PullSourceCreateInput, responses={201: PullSourceOutput}, parameters=[IDEMPOTENCY_KEY]
    )
    @idempotent
    def post(self, request: Request) -> Response:
        data = PullSourceCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        values["definition"] = _definition(values.pop("metric"))
        values["system"] = _system(values["system"])
        # The input serializer's fields are PullSourceFields' keys, with the two keys resolved above.
        source = pull_source_create(actor=acting_user(request), data=cast(PullSourceFields, values))
        return Response(PullSourceOutput(_listed().get(pk=source.pk)).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["metrics"])
class PullSourceDetail(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["pull_source_write"]

    @extend_schema(responses=PullSourceOutput)
    def get(self, request: Request, id: int) -> Response:
        return Response(PullSourceOutput(get_object_or_404(_listed(), pk=id)).data)

    @extend_schema(request=PullSourceInput, responses=PullSourceOutput)
    def patch(self, request: Request, id: int) -> Response:
        source = get_object_or_404(PullSource, pk=id)
        data = PullSourceInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        changes = cast(PullSourceFields, dict(data.validated_data))  # the serializer's fields are its keys
        pull_source_update(actor=acting_user(request), source=source, changes=changes)
        return Response(PullSourceOutput(_listed().get(pk=source.pk)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, id: int) -> Response:
        pull_source_delete(actor=acting_user(request), source=get_object_or_404(PullSource, pk=id))
        return Response(status=status.HTTP_204_NO_CONTENT)
