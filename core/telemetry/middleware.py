"""Request latency by view: the resolver's URL name keeps the label set small (never the raw path)."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from core.telemetry.instruments import REQUEST_LATENCY


class RequestLatencyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        # Unresolved paths (404s of unknown URLs) share one label rather than one per path.
        view = (match.view_name if match and match.view_name else "") or "<unresolved>"
        REQUEST_LATENCY.labels(
            view=view, method=request.method, status=f"{response.status_code // 100}xx"
        ).observe(time.perf_counter() - started)
        return response
