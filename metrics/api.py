"""Metrics API: systems, workloads, the definition registry, observations, ingest and comparisons."""

from __future__ import annotations

from datetime import timedelta

import django_filters
from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status, viewsets
from rest_framework.pagination import CursorPagination
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.errors import PayloadTooLarge
from core.api.filters import UtcDateTimeFilter
from core.api.permissions import RoleRequired, WriteRule
from core.api.serializers import ReasonInput
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, REPLAY_HEADER, idempotency_key, idempotent
from core.roles import METRIC_OWNERS, PROGRAM_LEADS
from metrics import ingest, observation_page, observation_rows, selectors, services
from metrics.boundary import boundary_sentence
from metrics.models import (
    Direction,
    MetricDefinition,
    Observation,
    Phase,
    Sampling,
    Statistic,
    System,
    Workload,
)
from metrics.selectors.comparison import ComparisonQuery
from metrics.services.definitions import EDITABLE_FIELDS

# Who may write, per action: refused with 403 before the body is read (core.api.permissions).
WRITE_RULES = {
    "reference_write": WriteRule("change systems and workloads", (METRIC_OWNERS, PROGRAM_LEADS)),
    "definition_register": WriteRule("register metric definitions", (METRIC_OWNERS,)),
    "definition_version_create": WriteRule("create metric versions", (METRIC_OWNERS,)),
    "definition_update": WriteRule("edit metric definitions", (METRIC_OWNERS,)),
    "definition_activate": WriteRule("activate metric definitions", (METRIC_OWNERS,)),
    "definition_deprecate": WriteRule("deprecate metric definitions", (METRIC_OWNERS,)),
    "pull_source_write": WriteRule("manage Prometheus pull sources", (METRIC_OWNERS,)),
    "observations_ingest": WriteRule("push observations", permission="metrics.add_observation"),
    "observations_ingest_otlp": WriteRule("push OTLP metrics", permission="metrics.add_observation"),
}


# --- systems and workloads (plain CRUD) -------------------------------------------------------------


class SystemSerializer(serializers.ModelSerializer):
    class Meta:
        model = System
        fields = ["id", "key", "name", "description"]


class WorkloadSerializer(serializers.ModelSerializer):
    class Meta:
        model = Workload
        fields = ["id", "key", "name", "size", "criticality", "owner_team"]


class ReferenceViewSet(viewsets.ModelViewSet):
    """Systems and workloads: plain CRUD by key, written by metric owners and program leads."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["reference_write"]
    lookup_field = "key"
    lookup_value_regex = "[-a-zA-Z0-9_]+"  # keys are slugs; anything else (a NUL too) is a 404

    @extend_schema(parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def create(self, request, *args, **kwargs):
        return super().create(request, *args, **kwargs)

    def perform_destroy(self, instance):
        services.reference_delete(instance=instance)


@extend_schema(tags=["metrics"])
class SystemViewSet(ReferenceViewSet):
    queryset = System.objects.all()
    serializer_class = SystemSerializer
    filterset_fields = ["key"]


@extend_schema(tags=["metrics"])
class WorkloadViewSet(ReferenceViewSet):
    queryset = Workload.objects.all()
    serializer_class = WorkloadSerializer
    filterset_fields = ["size", "criticality", "owner_team"]


# --- definitions -------------------------------------------------------------------------------------


class DefinitionOutput(serializers.ModelSerializer):
    ref = serializers.CharField(read_only=True)
    boundary = serializers.SerializerMethodField()

    class Meta:
        model = MetricDefinition
        fields = [
            "id",
            "ref",
            "key",
            "version",
            *EDITABLE_FIELDS,
            "boundary",
            "status",
            "created_at",
            "activated_at",
        ]

    def get_boundary(self, obj) -> str:
        return boundary_sentence(obj)


class DefinitionFields(serializers.Serializer):
    """The editable fields; `partial=True` for versions and edits."""

    name = serializers.CharField(max_length=120)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    unit = serializers.CharField(
        max_length=40, help_text="A pint unit: ms, s, token/s, percent, GiB, GPU_hour, USD…"
    )
    direction = serializers.ChoiceField(choices=Direction.choices)
    statistic = serializers.ChoiceField(choices=Statistic.choices, default=Statistic.MEAN)
    sampling = serializers.ChoiceField(choices=Sampling.choices)
    start_event = serializers.CharField(
        max_length=200, help_text="When the clock starts, e.g. 'the request arrives'"
    )
    end_event = serializers.CharField(max_length=200)
    includes = serializers.ListField(
        child=serializers.ChoiceField(choices=Phase.choices), required=False, default=list
    )
    excludes = serializers.ListField(
        child=serializers.ChoiceField(choices=Phase.choices), required=False, default=list
    )
    owner_team = serializers.CharField(max_length=80)
    min_value = serializers.FloatField(
        required=False,
        allow_null=True,
        help_text="Lowest value accepted, in `unit`. Omitted on registration: 0 for durations, counts and "
        "rates, otherwise none; null means none.",
    )
    max_value = serializers.FloatField(required=False, allow_null=True, help_text="Highest value accepted.")
    expected_interval = serializers.DurationField(
        required=False,
        allow_null=True,
        min_value=timedelta(minutes=1),
        help_text="How often values arrive ('HH:MM:SS' or 'D HH:MM:SS'); a feed is stale after 3×. "
        "Null: by sampling (1 h per request/interval, 1 day per step, never per run).",
    )
    otel_name = serializers.CharField(
        max_length=255,
        required=False,
        allow_blank=True,
        default="",
        help_text="The OpenTelemetry metric name POST /otlp/v1/metrics maps to this metric; blank: the key.",
    )


class DefinitionCreate(DefinitionFields):
    key = serializers.SlugField(max_length=80)


class DefinitionFilter(django_filters.FilterSet):
    class Meta:
        model = MetricDefinition
        fields = ["key", "status", "owner_team", "direction", "sampling"]


@extend_schema(tags=["metrics"])
class DefinitionListCreate(generics.ListAPIView):
    """Every version of every metric (filter by key, status, owner_team); POST registers version 1."""

    queryset = MetricDefinition.objects.order_by("key", "-version")
    serializer_class = DefinitionOutput
    filterset_class = DefinitionFilter
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["definition_register"]

    @extend_schema(request=DefinitionCreate, responses={201: DefinitionOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request):
        data = DefinitionCreate(data=request.data)
        data.is_valid(raise_exception=True)
        definition = services.definition_register(actor=request.user, data=data.validated_data)
        return Response(DefinitionOutput(definition).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["metrics"])
class DefinitionDetail(APIView):
    """A metric by key: its active version (or newest draft). PATCH edits that version."""

    @extend_schema(responses=DefinitionOutput)
    def get(self, request, key):
        return Response(DefinitionOutput(selectors.definition_get(key)).data)


@extend_schema(tags=["metrics"])
class DefinitionVersions(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["definition_version_create"]

    @extend_schema(responses=DefinitionOutput(many=True))
    def get(self, request, key):
        versions = selectors.definition_versions(key)
        if not versions:
            raise ApplicationError(f"Unknown metric '{key}'.", status=404)
        return Response(DefinitionOutput(versions, many=True).data)

    @extend_schema(request=DefinitionFields, responses={201: DefinitionOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request, key):
        data = DefinitionFields(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        definition = services.definition_version_create(
            actor=request.user, key=key, changes=data.validated_data
        )
        return Response(DefinitionOutput(definition).data, status=status.HTTP_201_CREATED)


def _version(key: str, version: int) -> MetricDefinition:
    return get_object_or_404(MetricDefinition, key=key, version=version)


@extend_schema(tags=["metrics"])
class DefinitionVersionDetail(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["definition_update"]

    @extend_schema(responses=DefinitionOutput)
    def get(self, request, key, version):
        return Response(DefinitionOutput(_version(key, version)).data)

    @extend_schema(request=DefinitionFields, responses=DefinitionOutput)
    def patch(self, request, key, version):
        data = DefinitionFields(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        definition = services.definition_update(
            actor=request.user, definition=_version(key, version), changes=data.validated_data
        )
        return Response(DefinitionOutput(definition).data)


@extend_schema(tags=["metrics"], request=None, responses=DefinitionOutput, parameters=[IDEMPOTENCY_KEY])
class DefinitionActivate(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["definition_activate"]

    @idempotent
    def post(self, request, key, version):
        definition = services.definition_activate(actor=request.user, definition=_version(key, version))
        return Response(DefinitionOutput(definition).data)


@extend_schema(
    tags=["metrics"], request=ReasonInput, responses=DefinitionOutput, parameters=[IDEMPOTENCY_KEY]
)
class DefinitionDeprecate(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["definition_deprecate"]

    @idempotent
    def post(self, request, key, version):
        data = ReasonInput(data=request.data)
        data.is_valid(raise_exception=True)
        definition = services.definition_deprecate(
            actor=request.user, definition=_version(key, version), reason=data.validated_data["reason"]
        )
        return Response(DefinitionOutput(definition).data)


# --- observations ------------------------------------------------------------------------------------


class ObservationOutput(serializers.ModelSerializer):
    metric = serializers.CharField(source="definition.ref")
    system = serializers.CharField(source="system.key")
    workload = serializers.CharField(source="workload.key")

    class Meta:
        model = Observation
        fields = [
            "metric",
            "system",
            "workload",
            "value",
            "unit",
            "observed_at",
            "run_id",
            "source",
            "tags",
            "batch",
        ]


class ObservationFilter(django_filters.FilterSet):
    metric = django_filters.CharFilter(method="filter_metric", help_text="key (active version) or key@N")
    system = django_filters.CharFilter(field_name="system__key")
    workload = django_filters.CharFilter(field_name="workload__key")
    since = UtcDateTimeFilter(field_name="observed_at", lookup_expr="gte")
    until = UtcDateTimeFilter(field_name="observed_at", lookup_expr="lt")

    class Meta:
        model = Observation
        fields = ["run_id", "batch", "source"]

    def filter_metric(self, queryset, name, value):
        return queryset.filter(definition=selectors.definition_resolve(value))


class NewestFirst(CursorPagination):
    """Pages by cursor without a total: over millions of observations the count cost more than the
    page. Ties on observed_at are broken by the rest of the natural key."""

    ordering = ("-observed_at", "definition_id", "system_id", "workload_id", "run_id")
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


@extend_schema(tags=["metrics"])
class ObservationList(generics.ListAPIView):
    """Newest first. Filter by metric (and system, workload, time window or run) to keep pages fast."""

    queryset = selectors.observations_list()
    serializer_class = ObservationOutput  # the schema; rows are written by metrics.observation_rows
    filterset_class = ObservationFilter
    pagination_class = NewestFirst

    def list(self, request, *args, **kwargs):
        if observation_page.answers(request.query_params):  # the usual filters: one SQL statement
            filters = observation_page.cleaned_filters(request.query_params, self.filterset_class)
            rows = self.paginate_queryset(observation_page.KeysetPage(filters))
        else:
            rows = self.paginate_queryset(
                observation_rows.page_rows(self.filter_queryset(self.get_queryset()))
            )
        return self.get_paginated_response(observation_rows.rows_as_json(rows, request))


class RawBodyParser(BaseParser):
    """Hands the body over untouched: the ingest service decodes JSON, NDJSON and CSV itself, fast."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream.read() if stream is not None else b""


class IngestOutput(serializers.Serializer):
    batch = serializers.IntegerField()
    received = serializers.IntegerField()
    inserted = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    definitions = serializers.ListField(child=serializers.CharField())


@extend_schema(
    tags=["metrics"],
    request={
        "application/json": OpenApiTypes.OBJECT,
        "application/x-ndjson": OpenApiTypes.STR,
        "text/csv": OpenApiTypes.STR,
    },
    parameters=[IDEMPOTENCY_KEY],
    responses={201: IngestOutput},
)
class ObservationBatch(APIView):
    """All-or-nothing batch ingest. A 422 lists every bad row as {index, field, message}."""

    parser_classes = [RawBodyParser]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["observations_ingest"]

    def post(self, request):
        if int(request.META.get("CONTENT_LENGTH") or 0) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            raise PayloadTooLarge(
                f"The body exceeds {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes; send smaller batches."
            )
        # The service replays a repeated Idempotency-Key itself, in the batch's own transaction.
        result = ingest.observations_ingest(
            body=request.data if isinstance(request.data, bytes) else b"",
            content_type=request.content_type or "",
            submitted_by=request.user,
            source=request.headers.get("User-Agent", "")[:100],
            idempotency_key=idempotency_key(request),
        )
        headers = {REPLAY_HEADER: "true"} if result.replayed else None
        return Response(result.as_dict(), status=status.HTTP_201_CREATED, headers=headers)


# --- comparisons -------------------------------------------------------------------------------------


class SideOutput(serializers.Serializer):
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


class ComparisonCore(serializers.Serializer):
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
    method = serializers.ChoiceField(choices=["order-statistic", "welch-fieller", "mann-whitney", "none"])
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
        help_text="Read from the day rollups (a side has more rows than the rollup threshold): the whole "
        "UTC days inside since/until, which then show that window."
    )
    accuracy = serializers.FloatField(
        allow_null=True,
        help_text="Where approximate: the relative error bound of every value, quantile and interval bound.",
    )
    tags = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="The tag filters read: key → values (OR within a key, AND across keys).",
    )
    warnings = serializers.ListField(
        child=serializers.CharField(),
        help_text="What the reader should know: pooled workloads of different sizes, a capped side, "
        "groups left out.",
    )


class GroupOutput(serializers.Serializer):
    value = serializers.CharField(help_text="The group-by tag's value.")
    comparison = ComparisonCore()


class ComparisonOutput(ComparisonCore):
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


@extend_schema(tags=["metrics"], parameters=[ComparisonQuery, TAG_PARAMETER], responses=ComparisonOutput)
class ComparisonView(APIView):
    """Old vs new on one metric version: each side's statistic and interval, the ratio's interval, the verdict."""

    def get(self, request):
        return Response(
            ComparisonOutput(selectors.comparison_from_query(request.query_params).as_dict()).data
        )
