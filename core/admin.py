from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import cast

from axes import admin as axes_admin
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin_base import ReadOnlyAdmin, ReadOnlyTabularInline, run_service_action
from core.models import (
    ApiToken,
    Delivery,
    Heartbeat,
    Notification,
    NotificationReceipt,
    Transition,
    WebhookEndpoint,
)
from core.roles import acting_user
from core.services import webhooks
from core.services.api_tokens import api_token_revoke
from core.webhook_bodies import Format


@admin.register(Transition)
class TransitionAdmin(ReadOnlyAdmin):
    """The audit trail is append-only: services write it in the transaction of each state change."""

    list_display = ("at", "content_type", "object_id", "action", "from_state", "to_state", "actor")
    list_filter = ("content_type", "action")
    search_fields = ("action", "reason", "actor__username")
    list_select_related = ("content_type", "actor")
    date_hierarchy = "at"


@admin.register(ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin):
    """Made only by their owners (the tokens page, the API), which is the one time a secret exists; an
    admin can see them and revoke them, through the service."""

    list_display = (
        "name",
        "user",
        "prefix",
        "scopes",
        "created_at",
        "expires_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("revoked_at",)
    search_fields = ("name", "prefix", "user__username")
    list_select_related = ("user",)
    exclude = ("digest",)
    actions = ["revoke"]

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        run_service_action(
            self,
            request,
            queryset,
            # The action's objects are this queryset's tokens; only staff (a signed-in user) reach it.
            lambda token: api_token_revoke(
                actor=acting_user(request), token=cast(ApiToken, token), reason="revoked in the admin"
            ),
            "Revoked {count} token(s).",
        )


@admin.register(Heartbeat)
class HeartbeatAdmin(ReadOnlyAdmin):
    """Written only by the heartbeat task a worker runs for beat (core.heartbeat); shown to see both live."""

    list_display = ("name", "at", "worker")


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(ReadOnlyAdmin):
    """Created and edited on /account/webhooks/ or through the API, where the secret is shown once; here
    browsed (without the secret), switched between formats, deactivated, reactivated or deleted through
    the same services."""

    list_display = ("name", "url_listed", "program_key", "events", "format", "is_active")
    list_filter = ("is_active", "format", "program_key")
    search_fields = ("name", "url", "program_key")
    # Without the secret, and a Slack or Teams URL without its path (which is that endpoint's secret).
    fields = ("name", "url_listed", "program_key", "events", "format", "is_active")
    readonly_fields = ("url_listed",)
    actions = [
        "deactivate",
        "reactivate",
        "send_standard",
        "send_slack",
        "send_teams",
        "delete_through_service",
    ]

    @admin.display(description="URL")
    def url_listed(self, endpoint: WebhookEndpoint) -> str:
        return endpoint.url_listed

    def _act(
        self,
        request: HttpRequest,
        queryset: models.QuerySet[WebhookEndpoint],
        service: Callable[..., object],
        done: str,
    ) -> None:
        run_service_action(
            self,
            request,
            queryset,
            # run_service_action types the selected objects as any Model.
            lambda endpoint: service(actor=acting_user(request), endpoint=cast(WebhookEndpoint, endpoint)),
            done,
        )

    @admin.action(description="Deactivate the selected endpoints")
    def deactivate(self, request: HttpRequest, queryset: models.QuerySet[WebhookEndpoint]) -> None:
        self._act(request, queryset, webhooks.webhook_endpoint_deactivate, "Deactivated {count} endpoint(s).")

    @admin.action(description="Reactivate the selected endpoints")
    def reactivate(self, request: HttpRequest, queryset: models.QuerySet[WebhookEndpoint]) -> None:
        self._act(request, queryset, webhooks.webhook_endpoint_reactivate, "Reactivated {count} endpoint(s).")

    def _send_as(self, request: HttpRequest, queryset: models.QuerySet[WebhookEndpoint], fmt: Format) -> None:
        self._act(
            request,
            queryset,
            partial(webhooks.webhook_endpoint_update, changes={"format": fmt}),
            f"Set {{count}} endpoint(s) to {fmt.label}.",
        )

    @admin.action(description="Send the selected endpoints Standard Webhooks (signed JSON)")
    def send_standard(self, request: HttpRequest, queryset: models.QuerySet[WebhookEndpoint]) -> None:
        self._send_as(request, queryset, Format.STANDARD)

    @admin.action(description="Send the selected endpoints Slack messages")
    def send_slack(self, request: HttpRequest, queryset: models.QuerySet[WebhookEndpoint]) -> None:
        self._send_as(request, queryset, Format.SLACK)

    @admin.action(description="Send the selected endpoints Teams Adaptive Cards")
    def send_teams(self, request: HttpRequest, queryset: models.QuerySet[WebhookEndpoint]) -> None:
        self._send_as(request, queryset, Format.TEAMS)

    @admin.action(description="Delete the selected endpoints (and their deliveries)")
    def delete_through_service(
        self, request: HttpRequest, queryset: models.QuerySet[WebhookEndpoint]
    ) -> None:
        self._act(request, queryset, webhooks.webhook_endpoint_delete, "Deleted {count} endpoint(s).")


class DeliveryInline(ReadOnlyTabularInline):
    model = Delivery
    fields = ("channel", "recipients", "endpoint", "status", "attempts", "delivered_at", "last_error")
    readonly_fields = fields


class ReceiptInline(ReadOnlyTabularInline):
    """Who has it in their in-app inbox, and whether they read it (read by the person, on the inbox)."""

    model = NotificationReceipt
    fields = ("user", "read_at")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> models.QuerySet[NotificationReceipt]:
        return super().get_queryset(request).select_related("user")


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    """Notifications, their receipts and deliveries are written by core.notifications, never by hand."""

    list_display = ("created_at", "event", "subject", "link")
    list_filter = ("event",)
    search_fields = ("subject", "event")
    date_hierarchy = "created_at"
    inlines = [ReceiptInline, DeliveryInline]


# django-axes' own admins allow a no-op "change" of a login record. Ours browse and delete only
# (deleting an attempt is how an administrator lifts a lockout). django-axes ships no type information,
# so its admins are Any to mypy.
class AccessAttemptAdmin(axes_admin.AccessAttemptAdmin):  # type: ignore[misc]
    def has_change_permission(self, request: HttpRequest, obj: AccessAttempt | None = None) -> bool:
        return False


class AccessLogAdmin(axes_admin.AccessLogAdmin):  # type: ignore[misc]
    def has_change_permission(self, request: HttpRequest, obj: AccessLog | None = None) -> bool:
        return False


class AccessFailureLogAdmin(axes_admin.AccessFailureLogAdmin):  # type: ignore[misc]
    def has_change_permission(self, request: HttpRequest, obj: AccessFailureLog | None = None) -> bool:
        return False


for _model, _admin in (
    (AccessAttempt, AccessAttemptAdmin),
    (AccessLog, AccessLogAdmin),
    (AccessFailureLog, AccessFailureLogAdmin),
):
    if admin.site.is_registered(_model):  # only while AXES_ENABLE_ADMIN is on
        admin.site.unregister(_model)
        admin.site.register(_model, _admin)
