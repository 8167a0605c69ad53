from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied

from core.errors import ApplicationError
from metrics import services
from metrics.models import IngestBatch, MetricDefinition, System, Workload


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ("key", "name")


@admin.register(Workload)
class WorkloadAdmin(admin.ModelAdmin):
    list_display = ("key", "name", "size", "criticality", "owner_team")
    list_filter = ("size", "criticality")


@admin.register(MetricDefinition)
class MetricDefinitionAdmin(admin.ModelAdmin):
    list_display = ("key", "version", "name", "unit", "direction", "status", "owner_team")
    list_filter = ("status", "owner_team")
    # Status moves only through the services (activation deprecates the previous version).
    readonly_fields = ("status", "activated_at", "created_by")
    actions = ["activate"]

    @admin.action(description="Activate the selected drafts (deprecates their previous version)")
    def activate(self, request, queryset):
        for definition in queryset:
            try:
                services.definition_activate(actor=request.user, definition=definition)
            except (ApplicationError, PermissionDenied) as exc:
                self.message_user(request, f"{definition.ref}: {exc}", messages.ERROR)


@admin.register(IngestBatch)
class IngestBatchAdmin(admin.ModelAdmin):
    list_display = ("id", "created_at", "submitted_by", "received", "inserted", "source")
    list_select_related = ("submitted_by",)


# Observations are not in the admin: Django's admin does not take composite primary keys. They are
# browsed on the metric pages and through GET /api/v1/observations/; ingest is their only writer.
