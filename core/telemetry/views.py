"""GET /metrics: the tracker's own metrics in the Prometheus text format.

Access: with settings.METRICS_TOKEN set, a request must carry `Authorization: Bearer <token>` (or
`Token <token>`); without it, only requests from this host are answered. Anyone else gets 404, so
the endpoint does not advertise itself.
"""

from __future__ import annotations

import hmac
import os

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess
from prometheus_client import REGISTRY as PROCESS_REGISTRY
from prometheus_client.registry import Collector

LOCAL_ADDRESSES = {"127.0.0.1", "::1"}


def scrape_allowed(request: HttpRequest) -> bool:
    token = settings.METRICS_TOKEN
    if not token:
        return request.META.get("REMOTE_ADDR") in LOCAL_ADDRESSES
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() in {"bearer", "token"} and hmac.compare_digest(given.strip(), token)


# Gauges computed at scrape time from the database, registered by the app that owns the data (its
# AppConfig.ready): in the process registry, and in each multiprocess registry built per scrape.
SCRAPE_COLLECTORS: list[Collector] = []


def scrape_collector_register(collector: Collector) -> None:
    SCRAPE_COLLECTORS.append(collector)
    PROCESS_REGISTRY.register(collector)


def _registry() -> CollectorRegistry:
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return PROCESS_REGISTRY  # one process (runserver, tests): its own values
    # Every gunicorn and Celery worker process writes its values to files there; sum them all.
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # prometheus_client leaves it unannotated
    for collector in SCRAPE_COLLECTORS:
        registry.register(collector)
    return registry


@login_not_required
@never_cache
@require_GET
def metrics_scrape(request: HttpRequest) -> HttpResponse:
    if not scrape_allowed(request):
        raise Http404
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)
