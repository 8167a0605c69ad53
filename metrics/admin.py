from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from core.admin_base import ReadOnlyAdmin, ServiceSaveAdmin, changed_values, run_service_action
from core.roles import acting_user
from metrics import services
from metrics.models import IngestBatch, MetricDefinition, PullSource, System, Workload
from metrics.services.definitions import EDITABLE_FIELDS, DefinitionFields, meaning_fixed
from metrics.services.pull_sources import (
    PullSourceFields,
    pull_source_create,
    pull_source_update,
)

if TYPE_CHECKING:
    # ModelAdmin is generic in django-stubs only: at run time it cannot be subscripted.
    from django.contrib.admin.options import _FieldGroups

    _ReferenceModelAdmin = admin.ModelAdmin[System | Workload]
else:
    _ReferenceModelAdmin = admin.ModelAdmin


class ReferenceAdmin(_ReferenceModelAdmin):
    """Systems and workloads are plain reference data (the API edits them as plain CRUD too).

    Deleting goes through `reference_delete`, which refuses rows that observations refer to with
    one query; Django's own delete page would load every referring observation."""

    actions = ["delete_unreferenced"]

    def has_delete_permission(self, request: HttpRequest, obj: System | Workload | None = None) -> bool:
        return False

    def has_reference_delete_permission(self, request: HttpRequest) -> bool:
        return super().has_delete_permission(request)

    @admin.action(
        description="Delete the selected (refused while anything refers to them)",
        permissions=["reference_delete"],
    )
    def delete_unreferenced(self, request: HttpRequest, queryset: QuerySet[System | Workload]) -> None:
        run_service_action(
            self,
            request,
            queryset,
            # run_service_action hands back the objects of `queryset`, typed as any Model.
            lambda instance: services.reference_delete(instance=cast("System | Workload", instance)),
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

    def get_fields(self, request: HttpRequest, obj: Model | None = None) -> _FieldGroups:
        return [*self.readonly_fields, *EDITABLE_FIELDS]

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> tuple[str, ...]:
        """An active or deprecated version (or a draft with data) keeps its meaning: its meaning fields
        are shown, not offered, instead of being refused on save (definition_update's rule)."""
        if isinstance(obj, MetricDefinition) and meaning_fixed(obj):
            return (*self.readonly_fields, *MetricDefinition.MEANING_FIELDS)
        return tuple(self.readonly_fields)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def service_save(
        self, request: HttpRequest, form: ModelForm[MetricDefinition], change: bool
    ) -> MetricDefinition:
        # The admin is for staff only: its user is signed in.
        return services.definition_update(
            actor=acting_user(request),
            definition=form.instance,
            changes=cast(DefinitionFields, changed_values(form, EDITABLE_FIELDS)),
        )

    @admin.action(description="Activate the selected drafts (deprecates their previous version)")
    def activate(self, request: HttpRequest, queryset: QuerySet[MetricDefinition]) -> None:
        run_service_action(
            self,
            request,
            queryset,
            # As above: run_service_action types the selected objects as any Model.
            lambda definition: services.definition_activate(
                actor=acting_user(request), definition=cast(MetricDefinition, definition)
            ),
            "Activated {count} definition(s).",
        )

    @admin.action(description="Deprecate the selected definitions")
    def deprecate(self, request: HttpRequest, queryset: QuerySet[MetricDefinition]) -> None:
        run_service_action(
            self,
            request,
            queryset,
            lambda definition: services.definition_deprecate(
                actor=acting_user(request), definition=cast(MetricDefinition, definition)
            ),
            "Deprecated {count} definition(s).",
        )


@admin.register(IngestBatch)
class IngestBatchAdmin(ReadOnlyAdmin):
    """Batches are written by ingest only."""

    list_display = ("id", "created_at", "submitted_by", "received", "inserted", "source")
    list_select_related = ("submitted_by",)
    search_fields = ("source", "submitted_by__username")
    date_hierarchy = "created_at"


PULL_SOURCE_EDITABLE = ("base_url", "query", "unit", "step_seconds", "point_kind", "workloads", "enabled")


@admin.register(PullSource)
class PullSourceAdmin(ServiceSaveAdmin):
    """Added with pull_source_create and changed with pull_source_update, so the same checks hold as
    over the API (the URL, the query's placeholders, a unit that converts, a point kind that fits the
    metric's sampling); a refusal is shown on the form. Metric and system are fixed once created."""

    list_display = ("definition", "system", "base_url", "point_kind", "enabled", "last_pulled_at")
    list_filter = ("point_kind", "enabled", "system")
    list_select_related = ("definition", "system")
    search_fields = ("definition__key", "base_url", "query")
    filter_horizontal = ("workloads",)
    status_fields = ("last_pulled_at", "last_error", "last_error_at", "consecutive_failures")

    def get_fields(self, request: HttpRequest, obj: Model | None = None) -> _FieldGroups:
        return ["definition", "system", *PULL_SOURCE_EDITABLE, *(self.status_fields if obj else ())]

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> tuple[str, ...]:
        return ("definition", "system", *self.status_fields) if obj else ()

    def service_save(self, request: HttpRequest, form: ModelForm[PullSource], change: bool) -> PullSource:
        values = dict(form.cleaned_data) if not change else changed_values(form, PULL_SOURCE_EDITABLE)
        if "workloads" in values:  # the services take workload keys, as the API sends them
            values["workloads"] = [workload.key for workload in values["workloads"]]
        if change:
            return pull_source_update(
                actor=acting_user(request), source=form.instance, changes=cast(PullSourceFields, values)
            )
        fields = {name: values[name] for name in ("definition", "system", *PULL_SOURCE_EDITABLE)}
        return pull_source_create(actor=acting_user(request), data=cast(PullSourceFields, fields))

    def save_related(
        self, request: HttpRequest, form: ModelForm[PullSource], formsets: Any, change: bool
    ) -> None:
        """The service set the workloads."""


# Observations are not in the admin: Django's admin does not take composite primary keys. They are
# browsed on the metric pages and through GET /api/v1/observations/; ingest is their only writer.
