from django.contrib import admin

from freeze import services
from freeze.models import Approval, Component, FreezeEntry, FreezeException, FreezeWindow


@admin.register(Component)
class ComponentAdmin(admin.ModelAdmin):
    list_display = ("key", "name", "layer", "owner_team")
    list_filter = ("layer",)


class EntryInline(admin.TabularInline):
    model = FreezeEntry
    extra = 0
    readonly_fields = ("component", "level")  # levels change through freeze_levels_set (history)


@admin.register(FreezeWindow)
class FreezeWindowAdmin(admin.ModelAdmin):
    list_display = ("name", "program", "starts_at", "ends_at", "default_level")
    inlines = [EntryInline]


class ApprovalInline(admin.TabularInline):
    model = Approval
    extra = 0
    readonly_fields = ("approver", "verdict", "comment", "as_program_lead", "created_at", "dismissed_at")


@admin.register(FreezeException)
class FreezeExceptionAdmin(admin.ModelAdmin):
    list_display = ("title", "component", "status", "risk", "change_starts_at", "change_ends_at", "requester")
    list_filter = ("status", "risk")
    list_select_related = ("component", "requester")
    readonly_fields = (
        "status",
        "required_approvals",
        "submitted_at",
        "decided_at",
        "requester",
        "last_editor",
        "authors",
    )
    inlines = [ApprovalInline]
    actions = ["expire_ended"]

    @admin.action(description="Expire approved exceptions whose change window has ended")
    def expire_ended(self, request, queryset):
        self.message_user(request, f"Expired {len(services.exceptions_expire())} exception(s).")
