"""Programs through the API: create one from a template, read it, advance its phases, re-plan a phase."""

from __future__ import annotations

from typing import Any, cast

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.api.serializers import KeyRelatedField, ReasonInput
from core.errors import ApplicationError
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
from program.months import program_month
from program.services.programs import ADVANCE_TOLERANCE_DAYS

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
    month = serializers.SerializerMethodField(
        help_text="The program month today is in; 0 before the start date."
    )

    def get_month(self, program: Program) -> int:
        return program_month(program.start_date, timezone.localdate(), program.months)

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
            "month",
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


class AdvanceInput(ReasonInput):
    shift_plan = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Move the phase that starts and every later one, their gates' due dates and the freeze "
        "windows that follow them by the days it starts off plan (see GET). Needs a reason.",
    )


class PlanMoveOutput(serializers.Serializer[Any]):
    subject = serializers.CharField(help_text="program | phase | gate | freeze window")
    id = serializers.IntegerField()
    name = serializers.CharField()
    field = serializers.CharField()

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # "from" is a Python keyword: these two cannot be declared as class attributes.
        fields = super().get_fields()
        fields["from"] = serializers.DateField(source="before")
        fields["to"] = serializers.DateField(source="after")
        return fields


class PlanShiftOutput(serializers.Serializer[Any]):
    days = serializers.IntegerField(help_text="Negative: the phase starts early, everything moves earlier.")
    moves = PlanMoveOutput(many=True)
    followers = PlanMoveOutput(many=True, help_text="Freeze windows that follow the moved phases.")


class PhaseBriefOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()


class AdvancePreviewOutput(serializers.Serializer[Any]):
    completes = PhaseBriefOutput(allow_null=True)
    starts = PhaseBriefOutput(allow_null=True)
    exit_gate = GateBriefOutput(allow_null=True)
    gate_done = serializers.BooleanField()
    planned = serializers.DateField(
        help_text="The planned end of the phase that completes, or the start date."
    )
    days_off = serializers.IntegerField()
    needs_reason = serializers.BooleanField()
    shift = PlanShiftOutput(allow_null=True, help_text="What shift_plan would move; null when on plan.")
    closes = GateBriefOutput(
        many=True,
        help_text="The completing phase's other undecided gates: advancing closes them "
        "(status closed, 'not decided — phase completed'), and they take no change afterwards.",
    )


@extend_schema(tags=["program"])
class ProgramAdvance(APIView):
    """Complete the active phase (its exit gate passed or waived) and activate the next; both get
    today as their actual end and start. A program not started yet starts its first phase today.
    More than 7 days before or after the planned end (or start date), a `reason` is required (400
    naming `reason`); it goes into the history. GET previews it, with what `shift_plan` would move."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["program_advance"]

    @extend_schema(responses=AdvancePreviewOutput)
    def get(self, request: Request, slug: str) -> Response:
        program = program_detail_or_404(slug)
        policies.require_read(request.user, program)
        preview = services.advance_preview(program, timezone.localdate(), ADVANCE_TOLERANCE_DAYS)
        if preview is None:
            raise ApplicationError(f"{program.name} is {program.status}: there is nothing to advance.")
        return Response(AdvancePreviewOutput(preview).data)

    @extend_schema(request=AdvanceInput, responses=ProgramDetailOutput, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request, slug: str) -> Response:
        data = AdvanceInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.program_advance(
            actor=acting_user(request),
            program=program_detail_or_404(slug),
            reason=data.validated_data["reason"],
            shift_plan=data.validated_data["shift_plan"],
        )
        return Response(ProgramDetailOutput(program_detail_or_404(slug)).data)


class ReplanInput(serializers.Serializer[Any]):
    planned_start = serializers.DateField()
    planned_end = serializers.DateField()
    reason = serializers.CharField(max_length=2000)
    confirm_overlap_or_gap = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Re-plan even though the phase then overlaps the phase before or after it, or leaves "
        "a gap next to one (otherwise a 409 naming both).",
    )


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
