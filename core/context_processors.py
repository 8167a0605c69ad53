from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from core.models import NotificationReceipt
from core.roles import FRAMEWORK_ENGINEERS, METRIC_OWNERS, has_role


def roles(request: HttpRequest) -> dict[str, bool]:
    """Role flags for templates, so pages show only the actions a person may take. Program roles are
    per program: each program page asks program.policies (`can_lead`, `can_decide`, …)."""
    user = request.user
    return {
        "is_framework_engineer": has_role(user, FRAMEWORK_ENGINEERS),
        "is_metric_owner": has_role(user, METRIC_OWNERS),
    }


def unread_notifications(request: HttpRequest) -> dict[str, int | SimpleLazyObject]:
    """The header's unread count: one indexed COUNT, run only when a page renders it (never for an
    htmx fragment, an API answer or a redirect)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"unread_notifications": 0}
    return {
        "unread_notifications": SimpleLazyObject(
            lambda: NotificationReceipt.objects.filter(user=user, read_at__isnull=True).count()
        )
    }
