"""A component's page: what CI sees for it now, its level in each window in force, its open
exceptions, and (for those who file them) a prefilled "request an exception"."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from core.roles import FRAMEWORK_ENGINEERS, has_role
from freeze import policies
from freeze.models import Component, FreezeException, Level
from freeze.pages.ci_panel import ci_panel


@require_GET
def component_detail(request: HttpRequest, key: str) -> HttpResponse:
    component = get_object_or_404(Component, key=key)
    now = timezone.now()
    # Every program's windows count, as for CI: the check deliberately ignores privacy (README).
    ci = ci_panel(request, component, at=now, now=now)
    exceptions = (
        FreezeException.objects.filter(
            policies.exceptions_readable(request.user),
            component=component,
            status__in=FreezeException.OPEN_STATUSES,
            change_ends_at__gt=now,
        )
        .select_related("window")
        .order_by("change_starts_at", "pk")
    )
    # Exceptions are filed under a window at `approval`: the one deciding now, if this reader sees it.
    deciding = ci.check.window if ci.check.level == Level.APPROVAL else None
    context = {
        "component": component,
        "ci": ci,
        "exceptions": exceptions,
        "can_file": has_role(request.user, FRAMEWORK_ENGINEERS),
        "file_window": deciding if deciding and policies.may_read_window(request.user, deciding) else None,
    }
    return render(request, "freeze/component_detail.html", context)
