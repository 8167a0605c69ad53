"""Gates through the API: add one to a phase, read it, evaluate, decide, reopen.

Its criteria (add, edit, delete, attest, re-pin) are in program.api.criteria."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.api.serializers import IdRelatedField
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from program import policies, selectors, services
from program.api.lookups import gate_detail_or_404
from program.api.rules import WRITE_RULES
from program.models import Criterion, CriterionResult, Decision, Gate, Phase

# --- output ------------------------------------------------------------------------------------------


class GateBriefOutput(serializers.ModelSerializer[Gate]):
    class Meta:
        model = Gate
        fields = ["id", "name", "kind", "due_date", "status", "stale", "last_evaluated_at"]


class ResultOutput(serializers.ModelSerializer[CriterionResult]):
    class Meta:
        model = CriterionResult
        fields = ["outcome", "value", "reason", "evidence"]


class CriterionOutput(serializers.ModelSerializer[Criterion]):
    metric = serializers.CharField(source="metric.ref", default=None, allow_null=True)
    workload = serializers.CharField(source="workload.key", default=None, allow_null=True)
    attested_by = serializers.CharField(source="attested_by.username", default=None, allow_null=True)
    result = serializers.SerializerMethodField()

    class Meta:
        model = Criterion
        fields = [
            "id",
            "name",
            "kind",
            "metric",
            "workload",
            "slot",
            "workload_slot",
            "statistic",
            "operator",
            "threshold",
            "window_days",
            "tag_filters",
            "group_by",
            "excluded_metrics",
            "min_samples",
            "require_significant",
            "required",
            "attested_by",
            "attested_at",
            "attestation_link",
            "result",
        ]

    def get_result(self, obj: Criterion) -> dict[str, Any] | None:
        results = getattr(obj, "latest_results", [])
        return ResultOutput(results[0]).data if results else None


class DecisionOutput(serializers.ModelSerializer[Decision]):
    decided_by = serializers.CharField(source="decided_by.username")

    class Meta:
        model = Decision
        fields = [
            "id",
            "decision",
            "note",
            "decided_by",
            "decided_at",
            "evidence",
            "reopened_at",
            "reopen_reason",
        ]


class GateOutput(GateBriefOutput):
    program = serializers.CharField(source="phase.program.slug")
    phase = serializers.CharField(source="phase.kind")
    criteria = CriterionOutput(many=True, read_only=True)
    decisions = DecisionOutput(many=True, read_only=True)

    class Meta(GateBriefOutput.Meta):
        fields = [*GateBriefOutput.Meta.fields, "program", "phase", "criteria", "decisions"]


# --- input and views ---------------------------------------------------------------------------------


class GateCreateInput(serializers.Serializer[Any]):
    phase = IdRelatedField(queryset=Phase.objects.all())
    name = serializers.CharField(max_length=160)
    kind = serializers.ChoiceField(choices=Gate.Kind.choices)
    due_date = serializers.DateField()


@extend_schema(tags=["program"])
class GateCreateView(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["gate_add"]

    @extend_schema(request=GateCreateInput, responses={201: GateOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request) -> Response:
        data = GateCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        gate = services.gate_add(actor=acting_user(request), **data.validated_data)
        return Response(GateOutput(selectors.gate_get(gate.pk)).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["program"])
class GateDetail(APIView):
    @extend_schema(responses=GateOutput)
    def get(self, request: Request, pk: int) -> Response:
        gate = gate_detail_or_404(pk)
        policies.require_read(request.user, gate.phase.program, f"gate {pk}")
        return Response(GateOutput(gate).data)


@extend_schema(tags=["program"], request=None, responses=GateOutput, parameters=[IDEMPOTENCY_KEY])
class GateEvaluate(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["gate_evaluate"]

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        services.gate_evaluate(gate=gate_detail_or_404(pk), actor=acting_user(request))
        return Response(GateOutput(gate_detail_or_404(pk)).data)


class DecisionInput(serializers.Serializer[Any]):
    decision = serializers.ChoiceField(choices=Decision.Verdict.choices)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


@extend_schema(
    tags=["program"], request=DecisionInput, responses={201: DecisionOutput}, parameters=[IDEMPOTENCY_KEY]
)
class GateDecision(APIView):
    """Program leads only. Pass needs every required criterion passing in a fresh evaluation (else 409)."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["gate_decide"]

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = DecisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        decision = services.gate_decide(
            gate=gate_detail_or_404(pk), actor=acting_user(request), **data.validated_data
        )
        return Response(DecisionOutput(decision).data, status=status.HTTP_201_CREATED)


class ReopenInput(serializers.Serializer[Any]):
    reason = serializers.CharField(max_length=2000)


@extend_schema(tags=["program"], request=ReopenInput, responses=GateOutput, parameters=[IDEMPOTENCY_KEY])
class GateReopen(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["gate_reopen"]

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = ReopenInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.gate_reopen(
            gate=gate_detail_or_404(pk), actor=acting_user(request), reason=data.validated_data["reason"]
        )
        return Response(GateOutput(gate_detail_or_404(pk)).data)
