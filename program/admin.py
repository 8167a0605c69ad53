from django.contrib import admin

from program import services
from program.models import Criterion, Decision, Gate, Phase, Program, WorkloadMigration


class PhaseInline(admin.TabularInline):
    model = Phase
    extra = 0
    readonly_fields = ("status", "actual_start", "actual_end")


@admin.register(Program)
class ProgramAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "start_date", "lead", "status")
    readonly_fields = ("status",)
    inlines = [PhaseInline]


class CriterionInline(admin.TabularInline):
    model = Criterion
    extra = 0
    fields = ("name", "kind", "metric", "workload", "operator", "threshold", "required")


@admin.register(Gate)
class GateAdmin(admin.ModelAdmin):
    list_display = ("name", "phase", "kind", "due_date", "status", "stale")
    list_filter = ("status", "kind")
    list_select_related = ("phase__program",)
    # Decisions go through gate_decide (page or API) so the evidence is frozen.
    readonly_fields = ("status", "stale", "last_evaluated_at")
    inlines = [CriterionInline]
    actions = ["evaluate"]

    @admin.action(description="Evaluate the selected gates now")
    def evaluate(self, request, queryset):
        for gate in queryset.select_related(
            "phase__program__baseline_system", "phase__program__candidate_system"
        ):
            services.gate_evaluate(gate=gate, actor=request.user)
        self.message_user(request, f"Evaluated {queryset.count()} gate(s).")


@admin.register(Decision)
class DecisionAdmin(admin.ModelAdmin):
    list_display = ("gate", "decision", "decided_by", "decided_at", "reopened_at")
    list_select_related = ("gate", "decided_by")

    def has_change_permission(self, request, obj=None):
        return False  # a decision and its evidence never change


@admin.register(WorkloadMigration)
class WorkloadMigrationAdmin(admin.ModelAdmin):
    list_display = ("program", "workload", "wave", "state")
    list_select_related = ("program", "workload")
    readonly_fields = ("state", "dual_run_started", "moved_on", "rolled_back_on")
