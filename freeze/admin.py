from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from core.admin_base import ReadOnlyAdmin, ReadOnlyTabularInline, ServiceSaveAdmin
from core.roles import acting_user
from freeze import services
from freeze.models import Approval, Component, FreezeEntry, FreezeException, FreezeOverride, FreezeWindow


@admin.register(Component)
class ComponentAdmin(ServiceSaveAdmin):
    """Components are added and edited through `component_upsert` (program leads), keyed by `key`."""

    list_display = ("key", "name", "layer", "owner_team")
    list_filter = ("layer",)
    search_fields = ("key", "name", "owner_team")
    fields = ("key", "name", "layer", "owner_team", "description")

    def get_readonly_fields(self, request: HttpRequest, obj: Component | None = None) -> tuple[str, ...]:
        return ("key",) if obj else ()  # the upsert is by key: a new key is a new component

    def service_save(self, request: HttpRequest, form: ModelForm[Component], change: bool) -> Component:
        data = form.cleaned_data
        return services.component_upsert(
            actor=acting_user(request),  # the admin is for signed-in staff only
            key=form.instance.key if change else data["key"],
            name=data["name"],
            layer=data["layer"],
            owner_team=data["owner_team"],
            description=data["description"],
        )


class EntryInline(ReadOnlyTabularInline):
    model = FreezeEntry
    fields = ("component", "level")
    readonly_fields = fields


@admin.register(FreezeWindow)
class FreezeWindowAdmin(ReadOnlyAdmin):
    """Windows are created by window_create and follow their phase; levels change through
    freeze_levels_set (with history) on the freeze list page or the API."""

    list_display = ("name", "program", "starts_at", "ends_at", "default_level", "rrule", "timezone")
    list_filter = ("default_level",)
    list_select_related = ("program",)
    search_fields = ("name", "program__slug")
    inlines = [EntryInline]


class ApprovalInline(ReadOnlyTabularInline):
    model = Approval
    fields = ("approver", "verdict", "comment", "as_program_lead", "created_at", "dismissed_at")
    readonly_fields = fields


@admin.register(FreezeException)
class FreezeExceptionAdmin(ReadOnlyAdmin):
    """Exceptions are filed, edited, submitted and decided through their services, which keep the
    separation of duties and the approval count; here they are only browsed."""

    list_display = (
        "title",
        "component",
        "status",
        "risk",
        "requires_lead_approval",
        "change_starts_at",
        "change_ends_at",
        "requester",
    )
    # requires_lead_approval: fixed at submission by the rising approval bar (freeze.services.approval_bar).
    list_filter = ("status", "risk", "requires_lead_approval")
    list_select_related = ("component", "requester")
    search_fields = ("title", "component__key", "requester__username")
    inlines = [ApprovalInline]
    actions = ["expire_ended"]

    @admin.action(description="Expire approved exceptions whose change window has ended")
    def expire_ended(self, request: HttpRequest, queryset: QuerySet[FreezeException]) -> None:
        self.message_user(request, f"Expired {len(services.exceptions_expire())} exception(s).")


@admin.register(FreezeOverride)
class FreezeOverrideAdmin(ReadOnlyAdmin):
    """Break-glass overrides are opened and reviewed by program leads through override_open and
    override_review (on the freeze page or the API); here they are only browsed."""

    list_display = ("component", "opened_by", "starts_at", "ends_at", "reviewed_by", "reviewed_at")
    list_filter = ("reviewed_at",)
    list_select_related = ("component", "opened_by", "reviewed_by")
    search_fields = ("component__key", "reason", "opened_by__username")
