from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, HttpResponseServerError, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt, requires_csrf_token
from django.views.decorators.http import require_GET

from core.api.errors import api_not_found, api_server_error, error_body
from core.health import BROKER_NOT_CONFIGURED, OK, broker_check, database_check
from core.heartbeat import heartbeat_status


@login_not_required
@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """For load balancers and the benchmarks: the database always, the broker when one is configured
    (503 when either is down). The worker and beat heartbeat is reported but never fails the check
    (core.heartbeat). Kubernetes probes use /livez and /readyz instead (core/pages/probes.py)."""
    checks = {"database": database_check(), "broker": broker_check()}
    healthy = checks["database"] == OK and checks["broker"] in (OK, BROKER_NOT_CONFIGURED)
    if checks["database"] == OK:
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
