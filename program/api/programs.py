"""Programs through the API: create one from a template, read it, advance its phases, re-plan a phase."""

from __future__ import annotations

from typing import Any, cast

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.api.serializers import KeyRelatedField, ReasonInput
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from metrics.models import System
from program import policies, selectors, services
from program.api.gates import GateBriefOutput
from program.api.lookups import program_detail_or_404
from program.api.migrations import MigrationOutput
from program.api.rules import WRITE_RULES
from program.blueprints import blueprint_keys
from program.models import Phase, Program

# --- output ------------------------------------------------------------------------------------------


class PhaseOutput(serializers.ModelSerializer[Phase]):
    gates = GateBriefOutput(many=True, read_only=True)

    class Meta:
        model = Phase
        fields = [
            "id",
            "kind",
            "name",
            "order",
            "planned_start",
            "planned_end",
            "actual_start",
            "actual_end",
            "status",
            "gates",
        ]


class ProgramOutput(serializers.ModelSerializer[Program]):
    lead = serializers.CharField(source="lead.username")
    baseline_system = serializers.CharField(source="baseline_system.key")
    candidate_system = serializers.CharField(source="candidate_system.key")

    class Meta:
        model = Program
        fields = [
            "id",
            "slug",
            "name",
            "description",
            "template",
            "months",
            "start_date",
            "lead",
            "baseline_system",
            "candidate_system",
            "status",
            "approval_bar_weeks",
            "is_private",
        ]


class ProgramDetailOutput(ProgramOutput):
    phases = PhaseOutput(many=True, read_only=True)
    migrations = MigrationOutput(many=True, read_only=True)

    class Meta(ProgramOutput.Meta):
        fields = [*ProgramOutput.Meta.fields, "phases", "migrations"]


# --- input and views ---------------------------------------------------------------------------------


class ProgramCreateInput(serializers.Serializer[Any]):
    slug = serializers.SlugField(max_length=80)
    name = serializers.CharField(max_length=120)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    start_date = serializers.DateField()
    baseline_system = KeyRelatedField(
        queryset=System.objects.all(),
        slug_field="key",
        error_messages={"does_not_exist": "Unknown system '{value}'."},
    )
    candidate_system = KeyRelatedField(
        queryset=System.objects.all(),
        slug_field="key",
        error_messages={"does_not_exist": "Unknown system '{value}'."},
    )
    template = serializers.ChoiceField(choices=[], default="rebuild-14m")
    is_private = serializers.BooleanField(
        required=False, default=False, help_text="Only its members and platform admins may read it."
    )
    bindings = serializers.DictField(
        child=serializers.CharField(allow_null=True, allow_blank=True),
        required=False,
        default=dict,
        help_text="{slot: key} (see GET /api/v1/templates/): a metric slot takes 'key' or 'key@N', a "
        "workload slot a workload key. A slot left out takes its suggested key if the registry has it, "
        "else stays unbound; null leaves it unbound.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(serializers.ChoiceField, self.fields["template"]).choices = blueprint_keys()


@extend_schema(tags=["program"])
class ProgramListCreate(generics.ListAPIView[Program]):
    # Explicit: the aggregate annotations drop Meta.ordering, and pages need a stable order.
    queryset = selectors.programs_list().order_by("-start_date", "slug")
    serializer_class = ProgramOutput
    filterset_fields = ["status"]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["program_create"]

    def get_queryset(self) -> QuerySet[Program]:
        # A private program is listed for its members and platform admins only.
        return super().get_queryset().filter(policies.readable_filter(self.request.user))

    @extend_schema(
        request=ProgramCreateInput, responses={201: ProgramDetailOutput}, parameters=[IDEMPOTENCY_KEY]
    )
    @idempotent
    def post(self, request: Request) -> Response:
        data = ProgramCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        program = services.program_create(
            actor=acting_user(request),
            slug=values["slug"],
            name=values["name"],
            description=values["description"],
            start_date=values["start_date"],
            template=values["template"],
            baseline=values["baseline_system"],
            candidate=values["candidate_system"],
            bindings=values["bindings"],
            is_private=values["is_private"],
        )
        return Response(
            ProgramDetailOutput(selectors.program_get(program.slug)).data, status=status.HTTP_201_CREATED
        )


@extend_schema(tags=["program"])
class ProgramDetail(APIView):
    @extend_schema(responses=ProgramDetailOutput)
    def get(self, request: Request, slug: str) -> Response:
        program = program_detail_or_404(slug)
        policies.require_read(request.user, program)
        return Response(ProgramDetailOutput(program).data)


@extend_schema(
    tags=["program"], request=ReasonInput, responses=ProgramDetailOutput, parameters=[IDEMPOTENCY_KEY]
)
class ProgramAdvance(APIView):
    """Complete the active phase (its exit gate passed or waived) and activate the next; both get
    today as their actual end and start. More than 7 days before or after the active phase's planned
    end, a `reason` is required (400 naming `reason`); it goes into the history."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["program_advance"]

    @idempotent
    def post(self, request: Request, slug: str) -> Response:
        data = ReasonInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.program_advance(
            actor=acting_user(request),
            program=program_detail_or_404(slug),
            reason=data.validated_data["reason"],
        )
        return Response(ProgramDetailOutput(program_detail_or_404(slug)).data)


class ReplanInput(serializers.Serializer[Any]):
    planned_start = serializers.DateField()
    planned_end = serializers.DateField()
    reason = serializers.CharField(max_length=2000)


@extend_schema(tags=["program"], request=ReplanInput, responses=PhaseOutput, parameters=[IDEMPOTENCY_KEY])
class PhaseReplan(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["phase_replan"]

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = ReplanInput(data=request.data)
        data.is_valid(raise_exception=True)
        phase = services.phase_replan(
            actor=acting_user(request), phase=get_object_or_404(Phase, pk=pk), **data.validated_data
        )
        return Response(PhaseOutput(phase).data)
