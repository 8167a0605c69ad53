from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import redirect
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from kombu import Connection


@login_not_required
@never_cache
@require_GET
def healthz(request):
    """Liveness for load balancers: the database always, the broker when one is configured."""
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
            with Connection(settings.CELERY_BROKER_URL, connect_timeout=2) as conn:
                conn.ensure_connection(max_retries=1, timeout=2)
            checks["broker"] = "ok"
        except Exception as exc:
            checks["broker"] = f"error: {exc.__class__.__name__}"
            healthy = False
    else:
        checks["broker"] = "not configured (tasks run in-process)"
    return JsonResponse({"status": "ok" if healthy else "error", **checks}, status=200 if healthy else 503)


def home(request):
    return redirect("program:list")
