from typing import cast

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin_base import ReadOnlyAdmin, ReadOnlyTabularInline, run_service_action
from core.roles import acting_user
from program import services
from program.models import Criterion, Decision, Gate, Phase, Program, WorkloadMigration

# Programs, phases, gates, criteria, decisions and migrations are state machines: they are created,
# re-planned, advanced, decided and moved on the pages and through the API, by their services.


class PhaseInline(ReadOnlyTabularInline):
    model = Phase
    fields = ("order", "kind", "name", "planned_start", "planned_end", "actual_start", "actual_end", "status")
    readonly_fields = fields


@admin.register(Program)
class ProgramAdmin(ReadOnlyAdmin):
    list_display = ("slug", "name", "start_date", "lead", "status")
    list_filter = ("status",)
    list_select_related = ("lead",)
    search_fields = ("slug", "name")
    inlines = [PhaseInline]


class CriterionInline(ReadOnlyTabularInline):
    model = Criterion
    fields = (
        "name",
        "kind",
        "slot",
        "metric",
        "workload_slot",
        "workload",
        "operator",
        "threshold",
        "required",
        "attested_by",
    )
    readonly_fields = fields


@admin.register(Gate)
class GateAdmin(ReadOnlyAdmin):
    list_display = ("name", "phase", "kind", "due_date", "status", "stale")
    list_filter = ("status", "kind", "stale")
    list_select_related = ("phase__program",)
    search_fields = ("name", "phase__program__slug")
    inlines = [CriterionInline]
    actions = ["evaluate"]

    @admin.action(description="Evaluate the selected gates now")
    def evaluate(self, request: HttpRequest, queryset: QuerySet[Gate]) -> None:
        run_service_action(
            self,
            request,
            queryset.select_related("phase__program__baseline_system", "phase__program__candidate_system"),
            # The action's objects are this queryset's gates; only staff (a signed-in user) reach it.
            lambda gate: services.gate_evaluate(gate=cast(Gate, gate), actor=acting_user(request)),
            "Evaluated {count} gate(s).",
        )


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    """A decision and its frozen evidence are written by gate_decide and closed by gate_reopen only."""

    list_display = ("gate", "decision", "decided_by", "decided_at", "reopened_at")
    list_filter = ("decision",)
    list_select_related = ("gate", "decided_by")
    search_fields = ("gate__name", "note")


@admin.register(WorkloadMigration)
class WorkloadMigrationAdmin(ReadOnlyAdmin):
    list_display = ("program", "workload", "wave", "state")
    list_filter = ("state", "wave")
    list_select_related = ("program", "workload")
    search_fields = ("workload__key", "program__slug")
