from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseServerError, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt, requires_csrf_token
from django.views.decorators.http import require_GET
from kombu.connection import Connection

from core.api.errors import api_not_found, api_server_error, error_body
from core.heartbeat import heartbeat_status


@login_not_required
@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers: the database always, the broker when one is configured. The
    worker and beat heartbeat is reported but never fails the check (core.heartbeat)."""
    checks: dict[str, str] = {}
    healthy = True
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:
        checks["database"] = f"error: {exc.__class__.__name__}"
        healthy = False
    if settings.HEALTH_CHECK_BROKER:
        try:
            # kombu leaves Connection unannotated.
            with Connection(settings.CELERY_BROKER_URL, connect_timeout=2) as conn:  # type: ignore[no-untyped-call]
                conn.ensure_connection(max_retries=1, timeout=2)
            checks["broker"] = "ok"
        except Exception as exc:
            checks["broker"] = f"error: {exc.__class__.__name__}"
            healthy = False
    else:
        checks["broker"] = "not configured (tasks run in-process)"
    if checks["database"] == "ok":
        checks["background"] = heartbeat_status()
    return JsonResponse({"status": "ok" if healthy else "error", **checks}, status=200 if healthy else 503)


# Error pages (config/urls.py handler403/404/500). API paths always get the JSON error shape.


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


@csrf_exempt
@login_not_required
def api_unknown(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """The last URL pattern: any unknown /api/ path is a JSON 404, also with DEBUG on (where Django
    would otherwise show its debug page instead of calling handler404)."""
    return api_not_found(request)


@requires_csrf_token
def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Says what role is needed (the PermissionDenied message). htmx gets just the panel to swap in."""
    reason = str(exception or "") or "You may not do this."
    if _is_api(request):
        return JsonResponse(error_body(reason, "permission_denied"), status=403)
    template = "_403.html" if getattr(request, "htmx", False) else "403.html"
    return render(request, template, {"reason": reason}, status=403)


@requires_csrf_token
def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return api_not_found(request, exception)
    return render(request, "404.html", {"request_path": request.path}, status=404)


@requires_csrf_token
def server_error(request: HttpRequest) -> HttpResponse:
    """Rendered without context processors or a database: whatever failed may be failing still."""
    if _is_api(request):
        return api_server_error(request)
    return HttpResponseServerError(loader.get_template("500.html").render())
