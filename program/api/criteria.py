"""Criteria API: add to a gate, edit, delete, attest, and re-pin a gate to its metrics' active versions.

Program leads only (WRITE_RULES in program.api.rules): anyone else gets 403 before the body is read.
Every change is a service in program.services.criteria, which refuses decided gates with a 409."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired, WriteRule
from core.api.serializers import KeyRelatedField
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from metrics.models import ComparedStatistic, Workload
from metrics.public import MetricRefField, group_by_check, tag_filters_check
from program import services
from program.api.gates import CriterionOutput, GateOutput
from program.api.lookups import gate_detail_or_404
from program.api.rules import WRITE_RULES
from program.models import Criterion, Gate


class ExcludedMetricInput(serializers.Serializer[Any]):
    metric = serializers.CharField(max_length=80, help_text="A metric key (every version of it is left out).")
    reason = serializers.CharField(max_length=500, help_text="Why it does not count; the gate page shows it.")


class CriterionCreateInput(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=Criterion.Kind.choices)
    metric = MetricRefField(
        required=False,
        allow_null=True,
        help_text="key@N (pinned); plain key pins the active version. "
        "An unknown one is a 400 naming `metric`.",
    )
    workload = KeyRelatedField(
        queryset=Workload.objects.all(),
        slug_field="key",
        required=False,
        allow_null=True,
        error_messages={"does_not_exist": "Unknown workload '{value}'."},
        help_text="null: every workload",
    )
    statistic = serializers.ChoiceField(choices=ComparedStatistic.choices, required=False, default="")
    operator = serializers.ChoiceField(choices=Criterion.Operator.choices, default="gte")
    threshold = serializers.FloatField(required=False, allow_null=True, default=None)
    window_days = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=3650, default=None
    )
    tag_filters = serializers.JSONField(
        required=False,
        default=dict,
        help_text='Only rows with these tags count: {"severity": ["sev1", "sev2"]} (OR within a key, '
        "AND across keys; text tag values).",
    )
    group_by = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="A tag key: the criterion must hold in every group of it present on both sides (the "
        "worst group decides); the evidence lists each group.",
    )
    excluded_metrics = ExcludedMetricInput(
        many=True,
        required=False,
        default=list,
        help_text="every_metric only: metrics left out of 'every metric', each with its reason.",
    )
    min_samples = serializers.IntegerField(required=False, min_value=2, max_value=1_000_000, default=30)
    require_significant = serializers.BooleanField(required=False, default=False)
    # The JSON field is named `required`; DRF's Field.required (a bool) is another thing.
    required = serializers.BooleanField(required=False, default=True)  # type: ignore[assignment]

    def validate_tag_filters(self, value: Any) -> dict[str, list[str]]:
        try:
            return tag_filters_check(value)
        except ApplicationError as exc:
            raise serializers.ValidationError(exc.message) from None

    def validate_group_by(self, value: str) -> str:
        try:
            return group_by_check(value) or ""
        except ApplicationError as exc:
            raise serializers.ValidationError(exc.message) from None


class CriterionEditInput(CriterionCreateInput):
    """Every field optional: only those sent change. `metric` as key (its active version) or key@N."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, partial=True, **kwargs)


@extend_schema(
    tags=["program"],
    request=CriterionCreateInput,
    responses={201: CriterionOutput},
    parameters=[IDEMPOTENCY_KEY],
)
class GateCriteria(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["criterion_add"]

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = CriterionCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        criterion = services.criterion_add(
            actor=acting_user(request), gate=get_object_or_404(Gate, pk=pk), **data.validated_data
        )
        return Response(CriterionOutput(criterion).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["program"])
class CriterionDetail(APIView):
    """Edit (PATCH) or delete (DELETE) one criterion of an undecided gate; a decided gate is a 409
    until it is reopened. Pinning a deprecated version is a 409 naming the active one."""

    permission_classes = [RoleRequired]

    @property
    def write_rule(self) -> WriteRule:
        return WRITE_RULES["criterion_delete" if self.request.method == "DELETE" else "criterion_edit"]

    @extend_schema(request=CriterionEditInput, responses=CriterionOutput, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def patch(self, request: Request, pk: int) -> Response:
        data = CriterionEditInput(data=request.data)
        data.is_valid(raise_exception=True)
        criterion = services.criterion_edit(
            actor=acting_user(request),
            criterion=get_object_or_404(Criterion, pk=pk),
            **data.validated_data,
        )
        return Response(CriterionOutput(criterion).data)

    @extend_schema(request=None, responses={204: None}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def delete(self, request: Request, pk: int) -> Response:
        services.criterion_delete(actor=acting_user(request), criterion=get_object_or_404(Criterion, pk=pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["program"], request=None, responses=GateOutput, parameters=[IDEMPOTENCY_KEY])
class GateRepin(APIView):
    """Move every stale criterion to its metric's active version in one step; clears `stale`."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["gate_repin"]

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        gate = services.gate_repin(actor=acting_user(request), gate=get_object_or_404(Gate, pk=pk))
        return Response(GateOutput(gate_detail_or_404(gate.pk)).data)


class AttestInput(serializers.Serializer[Any]):
    link = serializers.URLField(required=False, allow_blank=True, default="")


@extend_schema(tags=["program"], request=AttestInput, responses=CriterionOutput, parameters=[IDEMPOTENCY_KEY])
class CriterionAttest(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["criterion_attest"]

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = AttestInput(data=request.data)
        data.is_valid(raise_exception=True)
        criterion = services.criterion_attest(
            actor=acting_user(request),
            criterion=get_object_or_404(Criterion, pk=pk),
            link=data.validated_data["link"],
        )
        return Response(CriterionOutput(criterion).data)
