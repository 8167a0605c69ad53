"""Program API: programs from templates, phases, advance, gates, evaluation, decisions, migrations.

Criteria (add, edit, delete, attest, re-pin) are in program.api_criteria."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired, WriteRule
from core.api.serializers import ReasonInput
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS
from metrics.models import System, Workload
from program import selectors, services
from program.blueprints import blueprint_keys
from program.models import Criterion, CriterionResult, Decision, Gate, Phase, Program, WorkloadMigration
from program.services.gates import EVALUATE_ROLES

# Who may write, per action: refused with 403 before the body is read (core.api.permissions).
WRITE_RULES = {
    "program_create": WriteRule("create programs", (PROGRAM_LEADS,)),
    "program_advance": WriteRule("advance phases", (PROGRAM_LEADS,)),
    "phase_replan": WriteRule("re-plan phases", (PROGRAM_LEADS,)),
    "phase_backfill_dates": WriteRule("backfill phase dates", (PROGRAM_LEADS,)),
    "gate_add": WriteRule("add gates", (PROGRAM_LEADS,)),
    "gate_evaluate": WriteRule("evaluate gates", EVALUATE_ROLES),
    "gate_decide": WriteRule("decide gates", (PROGRAM_LEADS,)),
    "gate_reopen": WriteRule("reopen gates", (PROGRAM_LEADS,)),
    "criterion_add": WriteRule("add criteria", (PROGRAM_LEADS,)),
    "criterion_attest": WriteRule("attest checklist items", (PROGRAM_LEADS,)),
    "criterion_edit": WriteRule("edit criteria", (PROGRAM_LEADS,)),
    "criterion_delete": WriteRule("delete criteria", (PROGRAM_LEADS,)),
    "gate_repin": WriteRule("re-pin criteria", (PROGRAM_LEADS,)),
    "migration_record": WriteRule("record migrations", (PROGRAM_LEADS, FRAMEWORK_ENGINEERS)),
}

# --- output ------------------------------------------------------------------------------------------


class GateBrief(serializers.ModelSerializer):
    class Meta:
        model = Gate
        fields = ["id", "name", "kind", "due_date", "status", "stale", "last_evaluated_at"]


class PhaseOutput(serializers.ModelSerializer):
    gates = GateBrief(many=True, read_only=True)

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


class MigrationOutput(serializers.ModelSerializer):
    workload = serializers.CharField(source="workload.key")
    warning = serializers.CharField(source="canary_warning")

    class Meta:
        model = WorkloadMigration
        fields = [
            "id",
            "workload",
            "wave",
            "state",
            "dual_run_started",
            "moved_on",
            "rolled_back_on",
            "notes",
            "warning",
        ]


class ProgramOutput(serializers.ModelSerializer):
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
        ]


class ProgramDetailOutput(ProgramOutput):
    phases = PhaseOutput(many=True, read_only=True)
    migrations = MigrationOutput(many=True, read_only=True)

    class Meta(ProgramOutput.Meta):
        fields = [*ProgramOutput.Meta.fields, "phases", "migrations"]


class ResultOutput(serializers.ModelSerializer):
    class Meta:
        model = CriterionResult
        fields = ["outcome", "value", "reason", "evidence"]


class CriterionOutput(serializers.ModelSerializer):
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
            "min_samples",
            "require_significant",
            "required",
            "attested_by",
            "attested_at",
            "attestation_link",
            "result",
        ]

    def get_result(self, obj) -> dict | None:
        results = getattr(obj, "latest_results", [])
        return ResultOutput(results[0]).data if results else None


class DecisionOutput(serializers.ModelSerializer):
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


class GateOutput(GateBrief):
    program = serializers.CharField(source="phase.program.slug")
    phase = serializers.CharField(source="phase.kind")
    criteria = CriterionOutput(many=True, read_only=True)
    decisions = DecisionOutput(many=True, read_only=True)

    class Meta(GateBrief.Meta):
        fields = [*GateBrief.Meta.fields, "program", "phase", "criteria", "decisions"]


# --- programs and phases -----------------------------------------------------------------------------


class ProgramCreate(serializers.Serializer):
    slug = serializers.SlugField(max_length=80)
    name = serializers.CharField(max_length=120)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    start_date = serializers.DateField()
    baseline_system = serializers.SlugField()
    candidate_system = serializers.SlugField()
    template = serializers.ChoiceField(choices=[], default="rebuild-14m")
    bindings = serializers.DictField(
        child=serializers.CharField(allow_null=True, allow_blank=True),
        required=False,
        default=dict,
        help_text="{slot: key} (see GET /api/v1/templates/): a metric slot takes 'key' or 'key@N', a "
        "workload slot a workload key. A slot left out takes its suggested key if the registry has it, "
        "else stays unbound; null leaves it unbound.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["template"].choices = blueprint_keys()


def _system(key: str, field: str) -> System:
    system = System.objects.filter(key=key).first()
    if system is None:
        raise ApplicationError(f"Unknown system '{key}'.", status=400, field=field)
    return system


@extend_schema(tags=["program"])
class ProgramListCreate(generics.ListAPIView):
    # Explicit: the aggregate annotations drop Meta.ordering, and pages need a stable order.
    queryset = selectors.programs_list().order_by("-start_date", "slug")
    serializer_class = ProgramOutput
    filterset_fields = ["status"]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["program_create"]

    @extend_schema(request=ProgramCreate, responses={201: ProgramDetailOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request):
        data = ProgramCreate(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        program = services.program_create(
            actor=request.user,
            slug=values["slug"],
            name=values["name"],
            description=values["description"],
            start_date=values["start_date"],
            template=values["template"],
            baseline=_system(values["baseline_system"], "baseline_system"),
            candidate=_system(values["candidate_system"], "candidate_system"),
            bindings=values["bindings"],
        )
        return Response(
            ProgramDetailOutput(selectors.program_get(program.slug)).data, status=status.HTTP_201_CREATED
        )


@extend_schema(tags=["program"])
class ProgramDetail(APIView):
    @extend_schema(responses=ProgramDetailOutput)
    def get(self, request, slug):
        return Response(ProgramDetailOutput(_program(slug)).data)


def _program(slug: str) -> Program:
    try:
        return selectors.program_get(slug)
    except Program.DoesNotExist:
        raise ApplicationError(f"There is no program '{slug}'.", status=404) from None


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
    def post(self, request, slug):
        data = ReasonInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.program_advance(
            actor=request.user, program=_program(slug), reason=data.validated_data["reason"]
        )
        return Response(ProgramDetailOutput(_program(slug)).data)


class ReplanInput(serializers.Serializer):
    planned_start = serializers.DateField()
    planned_end = serializers.DateField()
    reason = serializers.CharField(max_length=2000)


@extend_schema(tags=["program"], request=ReplanInput, responses=PhaseOutput, parameters=[IDEMPOTENCY_KEY])
class PhaseReplan(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["phase_replan"]

    @idempotent
    def post(self, request, pk):
        data = ReplanInput(data=request.data)
        data.is_valid(raise_exception=True)
        phase = services.phase_replan(
            actor=request.user, phase=get_object_or_404(Phase, pk=pk), **data.validated_data
        )
        return Response(PhaseOutput(phase).data)


# --- gates -------------------------------------------------------------------------------------------


class GateCreate(serializers.Serializer):
    phase = serializers.PrimaryKeyRelatedField(queryset=Phase.objects.all())
    name = serializers.CharField(max_length=160)
    kind = serializers.ChoiceField(choices=Gate.Kind.choices)
    due_date = serializers.DateField()


@extend_schema(tags=["program"])
class GateCreateView(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["gate_add"]

    @extend_schema(request=GateCreate, responses={201: GateOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request):
        data = GateCreate(data=request.data)
        data.is_valid(raise_exception=True)
        gate = services.gate_add(actor=request.user, **data.validated_data)
        return Response(GateOutput(selectors.gate_get(gate.pk)).data, status=status.HTTP_201_CREATED)


def _gate(pk: int) -> Gate:
    try:
        return selectors.gate_get(pk)
    except Gate.DoesNotExist:
        raise ApplicationError(f"There is no gate {pk}.", status=404) from None


@extend_schema(tags=["program"])
class GateDetail(APIView):
    @extend_schema(responses=GateOutput)
    def get(self, request, pk):
        return Response(GateOutput(_gate(pk)).data)


@extend_schema(tags=["program"], request=None, responses=GateOutput, parameters=[IDEMPOTENCY_KEY])
class GateEvaluate(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["gate_evaluate"]

    @idempotent
    def post(self, request, pk):
        services.gate_evaluate(gate=_gate(pk), actor=request.user)
        return Response(GateOutput(_gate(pk)).data)


class DecisionInput(serializers.Serializer):
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
    def post(self, request, pk):
        data = DecisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        decision = services.gate_decide(gate=_gate(pk), lead=request.user, **data.validated_data)
        return Response(DecisionOutput(decision).data, status=status.HTTP_201_CREATED)


class ReopenInput(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


@extend_schema(tags=["program"], request=ReopenInput, responses=GateOutput, parameters=[IDEMPOTENCY_KEY])
class GateReopen(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["gate_reopen"]

    @idempotent
    def post(self, request, pk):
        data = ReopenInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.gate_reopen(gate=_gate(pk), lead=request.user, reason=data.validated_data["reason"])
        return Response(GateOutput(_gate(pk)).data)


# --- migrations --------------------------------------------------------------------------------------


class MigrationInput(serializers.Serializer):
    workload = serializers.SlugField()
    wave = serializers.IntegerField(min_value=0, max_value=50)
    notes = serializers.CharField(required=False, allow_blank=True, default="")


@extend_schema(tags=["program"])
class ProgramMigrations(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["migration_record"]

    @extend_schema(responses=MigrationOutput(many=True))
    def get(self, request, slug):
        return Response(MigrationOutput(_program(slug).migrations.all(), many=True).data)

    @extend_schema(request=MigrationInput, responses={201: MigrationOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request, slug):
        data = MigrationInput(data=request.data)
        data.is_valid(raise_exception=True)
        workload = Workload.objects.filter(key=data.validated_data["workload"]).first()
        if workload is None:
            raise ApplicationError(
                f"Unknown workload '{data.validated_data['workload']}'.", status=400, field="workload"
            )
        migration = services.migration_upsert(
            actor=request.user,
            program=get_object_or_404(Program, slug=slug),
            workload=workload,
            wave=data.validated_data["wave"],
            notes=data.validated_data["notes"],
        )
        return Response(MigrationOutput(migration).data, status=status.HTTP_201_CREATED)


class MigrationStateInput(serializers.Serializer):
    state = serializers.ChoiceField(choices=WorkloadMigration.State.choices)
    reason = serializers.CharField(max_length=2000, help_text="Why it moves; shown in the program history.")


@extend_schema(
    tags=["program"], request=MigrationStateInput, responses=MigrationOutput, parameters=[IDEMPOTENCY_KEY]
)
class MigrationState(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["migration_record"]

    @idempotent
    def post(self, request, pk):
        data = MigrationStateInput(data=request.data)
        data.is_valid(raise_exception=True)
        migration = services.migration_set_state(
            actor=request.user,
            migration=get_object_or_404(WorkloadMigration.objects.select_related("workload"), pk=pk),
            **data.validated_data,
        )
        return Response(MigrationOutput(migration).data)
