"""Metrics API: the definition registry — register, version, edit, activate, deprecate."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.api.serializers import ReasonInput
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from metrics import selectors, services
from metrics.api.fields import KnownKeyFilter
from metrics.api.write_rules import WRITE_RULES
from metrics.boundary import boundary_sentence
from metrics.models import Direction, MetricDefinition, Phase, Sampling, Statistic
from metrics.services.definitions import EDITABLE_FIELDS


class DefinitionOutput(serializers.ModelSerializer[MetricDefinition]):
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

    def get_boundary(self, obj: MetricDefinition) -> str:
        return boundary_sentence(obj)


class DefinitionInput(serializers.Serializer[dict[str, Any]]):
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


class DefinitionCreateInput(DefinitionInput):
    key = serializers.SlugField(max_length=80)


class DefinitionFilter(django_filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped; --strict only
    key = KnownKeyFilter(model=MetricDefinition, noun="metric")

    class Meta:
        model = MetricDefinition
        fields = ["key", "status", "owner_team", "direction", "sampling"]


@extend_schema(tags=["metrics"])
class DefinitionListCreate(generics.ListAPIView[MetricDefinition]):
    """Every version of every metric (filter by key, status, owner_team); POST registers version 1."""

    queryset = MetricDefinition.objects.order_by("key", "-version")
    serializer_class = DefinitionOutput
    filterset_class = DefinitionFilter
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["definition_register"]

    @extend_schema(
        request=DefinitionCreateInput, responses={201: DefinitionOutput}, parameters=[IDEMPOTENCY_KEY]
    )
    @idempotent
    def post(self, request: Request) -> Response:
        data = DefinitionCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        definition = services.definition_register(actor=acting_user(request), data=data.validated_data)
        return Response(DefinitionOutput(definition).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["metrics"])
class DefinitionDetail(APIView):
    """A metric by key: its active version (or newest draft). PATCH edits that version."""

    @extend_schema(responses=DefinitionOutput)
    def get(self, request: Request, key: str) -> Response:
        return Response(DefinitionOutput(selectors.definition_get(key)).data)


@extend_schema(tags=["metrics"])
class DefinitionVersions(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["definition_version_create"]

    @extend_schema(responses=DefinitionOutput(many=True))
    def get(self, request: Request, key: str) -> Response:
        versions = selectors.definition_versions(key)
        if not versions:
            raise ApplicationError(f"Unknown metric '{key}'.", status=404)
        return Response(DefinitionOutput(versions, many=True).data)

    @extend_schema(request=DefinitionInput, responses={201: DefinitionOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request, key: str) -> Response:
        data = DefinitionInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        definition = services.definition_version_create(
            actor=acting_user(request), key=key, changes=data.validated_data
        )
        return Response(DefinitionOutput(definition).data, status=status.HTTP_201_CREATED)


def _version(key: str, version: int) -> MetricDefinition:
    return get_object_or_404(MetricDefinition, key=key, version=version)


@extend_schema(tags=["metrics"])
class DefinitionVersionDetail(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["definition_update"]

    @extend_schema(responses=DefinitionOutput)
    def get(self, request: Request, key: str, version: int) -> Response:
        return Response(DefinitionOutput(_version(key, version)).data)

    @extend_schema(request=DefinitionInput, responses=DefinitionOutput)
    def patch(self, request: Request, key: str, version: int) -> Response:
        data = DefinitionInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        definition = services.definition_update(
            actor=acting_user(request), definition=_version(key, version), changes=data.validated_data
        )
        return Response(DefinitionOutput(definition).data)


@extend_schema(tags=["metrics"], request=None, responses=DefinitionOutput, parameters=[IDEMPOTENCY_KEY])
class DefinitionActivate(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["definition_activate"]

    @idempotent
    def post(self, request: Request, key: str, version: int) -> Response:
        definition = services.definition_activate(
            actor=acting_user(request), definition=_version(key, version)
        )
        return Response(DefinitionOutput(definition).data)


@extend_schema(
    tags=["metrics"], request=ReasonInput, responses=DefinitionOutput, parameters=[IDEMPOTENCY_KEY]
)
class DefinitionDeprecate(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["definition_deprecate"]

    @idempotent
    def post(self, request: Request, key: str, version: int) -> Response:
        data = ReasonInput(data=request.data)
        data.is_valid(raise_exception=True)
        definition = services.definition_deprecate(
            actor=acting_user(request),
            definition=_version(key, version),
            reason=data.validated_data["reason"],
        )
        return Response(DefinitionOutput(definition).data)
