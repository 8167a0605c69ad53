"""Every request has an id: the caller's `X-Request-ID` when it is a sensible one, else a new one.

It is bound to the log context for the whole request (so every record logged while serving it carries
`request_id`), travels in the headers of every task the request queues (django-structlog's Celery
receivers, so the worker's records carry it too), and is echoed in the response's `X-Request-ID`, for a
caller or a proxy to quote.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import structlog
from django.http import HttpRequest, HttpResponse

from core.api.throttling import client_ip

HEADER = "X-Request-ID"
META_KEY = "HTTP_X_REQUEST_ID"
# What an upstream id may look like (a UUID, a proxy's hex or base64 id, a trace id). Anything else, say
# a header stuffed with text to forge log lines, is replaced by a new id rather than logged.
_ACCEPTED = re.compile(r"[A-Za-z0-9._:+/=-]{1,128}")


def request_id_of(request: HttpRequest) -> str:
    """The id for this request: the upstream one if acceptable, else a new UUID."""
    upstream = request.META.get(META_KEY, "")
    return upstream if _ACCEPTED.fullmatch(upstream) else str(uuid.uuid4())


class RequestIdMiddleware:
    """Outermost but for the latency timer, so even a 503 from the outage middleware carries the id.
    django-structlog's RequestMiddleware, further in, reads the same id from the header (it trusts the
    upstream id: this middleware has already replaced one that was not acceptable)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_of(request)
        request.META[META_KEY] = request_id
        structlog.contextvars.clear_contextvars()
        # The address the throttles trust (NUM_PROXIES), not whatever X-Forwarded-For claims.
        structlog.contextvars.bind_contextvars(request_id=request_id, ip=client_ip(request))
        try:
            response = self.get_response(request)
        finally:
            structlog.contextvars.clear_contextvars()
        response[HEADER] = request_id
        return response
