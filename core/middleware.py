from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.core.signals import got_request_exception
from django.http import HttpRequest, HttpResponse, HttpResponseBase

from core.api.errors import api_unavailable
from core.unavailable import is_unavailable, page_unavailable

logger = logging.getLogger(__name__)


class PageLoginRequiredMiddleware(LoginRequiredMiddleware):
    """Pages redirect anonymous users to the login page; the API answers 401 through DRF instead."""

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., HttpResponseBase],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponseBase | None:
        if request.path_info.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


class ServiceUnavailableMiddleware:
    """Turns "database or broker out of reach" into 503 with Retry-After, wherever in the request it happens.

    Listed above every middleware that touches the database. Django converts an exception raised in a
    later middleware (the session and the user are loaded from the database there) or in a page view
    into a 500 response before it reaches this one, so the exception is noticed through
    `got_request_exception` and the 500 replaced here.
    DRF views answer 503 themselves (core.api.errors.exception_handler).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        got_request_exception.connect(_mark_unavailable, dispatch_uid="core.service_unavailable")

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if getattr(request, UNAVAILABLE_MARK, False):
            logger.warning("503 for %s: database or broker unavailable", request.path)
            return (
                api_unavailable(request)
                if request.path_info.startswith("/api/")
                else page_unavailable(request)
            )
        return response


UNAVAILABLE_MARK = "_service_unavailable"


def _mark_unavailable(sender: object, request: HttpRequest | None = None, **kwargs: Any) -> None:
    # Called inside Django's `except` block, so the exception is the one being handled.
    if request is not None and is_unavailable(sys.exc_info()[1]):
        setattr(request, UNAVAILABLE_MARK, True)
