from django.contrib import admin

from core.admin_base import ReadOnlyAdmin, ServiceSaveAdmin, changed_values, run_service_action
from metrics import services
from metrics.models import IngestBatch, MetricDefinition, System, Workload
from metrics.services.definitions import EDITABLE_FIELDS


class ReferenceAdmin(admin.ModelAdmin):
    """Systems and workloads are plain reference data (the API edits them as plain CRUD too).

    Deleting goes through `reference_delete`, which refuses rows that observations refer to with
    one query; Django's own delete page would load every referring observation."""

    actions = ["delete_unreferenced"]

    def has_delete_permission(self, request, obj=None):
        return False

    def has_reference_delete_permission(self, request):
        return super().has_delete_permission(request)

    @admin.action(
        description="Delete the selected (refused while anything refers to them)",
        permissions=["reference_delete"],
    )
    def delete_unreferenced(self, request, queryset):
        run_service_action(
            self,
            request,
            queryset,
            lambda instance: services.reference_delete(instance=instance),
            "Deleted {count}.",
        )


@admin.register(System)
class SystemAdmin(ReferenceAdmin):
    list_display = ("key", "name")
    search_fields = ("key", "name")


@admin.register(Workload)
class WorkloadAdmin(ReferenceAdmin):
    list_display = ("key", "name", "size", "criticality", "owner_team")
    list_filter = ("size", "criticality")
    search_fields = ("key", "name", "owner_team")


@admin.register(MetricDefinition)
class MetricDefinitionAdmin(ServiceSaveAdmin):
    """Edits go through `definition_update`: wording and ownership of any version, meaning only on a
    draft (a meaning change on an active version is refused on the form). New metrics and versions
    are made on the metric pages or through the API; status moves only through the actions."""

    list_display = ("key", "version", "name", "unit", "direction", "status", "owner_team")
    list_filter = ("status", "owner_team")
    search_fields = ("key", "name", "owner_team")
    readonly_fields = ("key", "version", "status", "created_by", "created_at", "activated_at")
    actions = ["activate", "deprecate"]

    def get_fields(self, request, obj=None):
        return [*self.readonly_fields, *EDITABLE_FIELDS]

    def has_add_permission(self, request):
        return False

    def service_save(self, request, form, change):
        return services.definition_update(
            actor=request.user, definition=form.instance, changes=changed_values(form, EDITABLE_FIELDS)
        )

    @admin.action(description="Activate the selected drafts (deprecates their previous version)")
    def activate(self, request, queryset):
        run_service_action(
            self,
            request,
            queryset,
            lambda definition: services.definition_activate(actor=request.user, definition=definition),
            "Activated {count} definition(s).",
        )

    @admin.action(description="Deprecate the selected definitions")
    def deprecate(self, request, queryset):
        run_service_action(
            self,
            request,
            queryset,
            lambda definition: services.definition_deprecate(actor=request.user, definition=definition),
            "Deprecated {count} definition(s).",
        )


@admin.register(IngestBatch)
class IngestBatchAdmin(ReadOnlyAdmin):
    """Batches are written by ingest only."""

    list_display = ("id", "created_at", "submitted_by", "received", "inserted", "source")
    list_select_related = ("submitted_by",)
    search_fields = ("source", "submitted_by__username")
    date_hierarchy = "created_at"


# Observations are not in the admin: Django's admin does not take composite primary keys. They are
# browsed on the metric pages and through GET /api/v1/observations/; ingest is their only writer.
