"""A program's workload migrations through the API: list, record (upsert by workload), move state."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.api.serializers import KeyRelatedField
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from metrics.models import Workload
from program import policies, services
from program.api.lookups import program_detail_or_404, program_or_404
from program.api.rules import WRITE_RULES
from program.models import WorkloadMigration


class MigrationOutput(serializers.ModelSerializer[WorkloadMigration]):
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


class MigrationInput(serializers.Serializer[Any]):
    workload = KeyRelatedField(
        queryset=Workload.objects.all(),
        slug_field="key",
        error_messages={"does_not_exist": "Unknown workload '{value}'."},
    )
    wave = serializers.IntegerField(min_value=0, max_value=50)
    notes = serializers.CharField(required=False, allow_blank=True, default="")


@extend_schema(tags=["program"])
class ProgramMigrations(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["migration_record"]

    @extend_schema(responses=MigrationOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        program = program_detail_or_404(slug)
        policies.require_read(request.user, program)
        return Response(MigrationOutput(program.migrations.all(), many=True).data)

    @extend_schema(request=MigrationInput, responses={201: MigrationOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request, slug: str) -> Response:
        data = MigrationInput(data=request.data)
        data.is_valid(raise_exception=True)
        migration = services.migration_upsert(
            actor=acting_user(request),
            program=program_or_404(slug),
            workload=data.validated_data["workload"],
            wave=data.validated_data["wave"],
            notes=data.validated_data["notes"],
        )
        return Response(MigrationOutput(migration).data, status=status.HTTP_201_CREATED)


class MigrationStateInput(serializers.Serializer[Any]):
    state = serializers.ChoiceField(choices=WorkloadMigration.State.choices)
    reason = serializers.CharField(max_length=2000, help_text="Why it moves; shown in the program history.")


@extend_schema(
    tags=["program"], request=MigrationStateInput, responses=MigrationOutput, parameters=[IDEMPOTENCY_KEY]
)
class MigrationState(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["migration_state"]

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = MigrationStateInput(data=request.data)
        data.is_valid(raise_exception=True)
        migration = services.migration_set_state(
            actor=acting_user(request),
            migration=get_object_or_404(WorkloadMigration.objects.select_related("workload"), pk=pk),
            **data.validated_data,
        )
        return Response(MigrationOutput(migration).data)
