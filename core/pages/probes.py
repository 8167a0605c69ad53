"""What a supervisor asks of a web process (Kubernetes' probes, compose's and the image's HEALTHCHECK),
and what version it runs.

/livez answers as long as the process does: it touches neither the database nor Redis, so an outage
of either never restarts every web pod at once. /readyz takes a pod out of the Service while the
database is out of reach; the broker is only reported, because pages and the API keep working without
it (a Redis outage answers no 500s) and a pod out of the Service would serve nobody.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from config.version import git_revision, version
from core.health import OK, broker_check, database_check


@login_not_required
@never_cache
@require_GET
def livez(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": OK})


@login_not_required
@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    database = database_check()
    ready = database == OK
    body = {"status": OK if ready else "error", "database": database, "broker": broker_check()}
    return JsonResponse(body, status=200 if ready else 503)


@login_not_required
@require_GET
def version_info(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"version": version(), "revision": git_revision()})
