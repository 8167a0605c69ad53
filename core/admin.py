from django.contrib import admin

from core.models import Delivery, Notification, Transition, WebhookEndpoint


@admin.register(Transition)
class TransitionAdmin(admin.ModelAdmin):
    list_display = ("at", "content_type", "object_id", "action", "from_state", "to_state", "actor")
    list_filter = ("content_type", "action")
    list_select_related = ("content_type", "actor")

    def has_change_permission(self, request, obj=None):
        return False  # the audit trail is append-only

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    list_display = ("name", "url", "is_active")


class DeliveryInline(admin.TabularInline):
    model = Delivery
    extra = 0
    readonly_fields = (
        "channel",
        "recipients",
        "endpoint",
        "status",
        "attempts",
        "delivered_at",
        "last_error",
    )


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("created_at", "event", "subject")
    list_filter = ("event",)
    inlines = [DeliveryInline]
