"""Who the client is, for rate limits and the login lockout; the token endpoint's throttle and the global
per-user API rate limit.

The client address is REMOTE_ADDR unless settings say how many trusted proxies stand in front of the app
(REST_FRAMEWORK["NUM_PROXIES"], from the NUM_PROXIES environment variable). Only then is X-Forwarded-For
read, and only the entry NUM_PROXIES places from its right end, the one the outermost trusted proxy appended:
anything left of it is the client's say.
Counts live in the default cache, which production requires to be shared (Redis), so every worker process
counts the same requests. While that cache is out of reach the token endpoint's throttle counts the
address's failed sign-ins in PostgreSQL instead (django-axes' failure log), so signing in still works.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from axes.models import AccessFailureLog
from django.http import HttpRequest
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.throttling import AnonRateThrottle, BaseThrottle, UserRateThrottle

from core.unavailable import is_unavailable

if TYPE_CHECKING:  # rest_framework.views imports this module (DEFAULT_THROTTLE_CLASSES) while it loads
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

_IDENT = BaseThrottle()


def client_ip(request: HttpRequest) -> str | None:
    """The client address as DRF's throttles see it; django-axes uses it too (AXES_CLIENT_IP_CALLABLE)."""
    # DRF's stub asks for its Request, but get_ident reads only the headers and META a Django request has
    # too, and django-axes passes a Django request.
    return _IDENT.get_ident(request) or None  # type: ignore[arg-type]


class TokenLoginThrottle(AnonRateThrottle):
    """Token requests per client address, counted before the password is looked at.

    With the cache down it falls back to the database: the address's failed sign-ins in the last period
    (django-axes writes one AccessFailureLog row per failure, AXES_ENABLE_ACCESS_FAILURE_LOG), against the
    same rate. Successful sign-ins are not counted then; a guessing client fails, so it is still stopped,
    and the per-account lockout (axes, also in PostgreSQL) holds as always.
    """

    LIMIT, PERIOD_SECONDS = 30, 60
    scope = "token"
    rate = f"{LIMIT}/min"
    _from_database = False

    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            return bool(super().allow_request(request, view))
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            logger.warning("token throttle: cache unavailable, counting failures in the database: %s", exc)
        self._from_database = True
        since = timezone.now() - timedelta(seconds=self.PERIOD_SECONDS)
        failures = AccessFailureLog.objects.filter(
            ip_address=self.get_ident(request), attempt_time__gte=since
        )
        return bool(failures.count() < self.LIMIT)

    def wait(self) -> float | None:
        if self._from_database:
            return float(self.PERIOD_SECONDS)
        return super().wait()


# Monotonic time until which this process lets requests through unthrottled: the cache (Redis) was out of
# reach, and asking it again on every request would add its connect timeout to each one.
_cache_down_until = 0.0
CACHE_DOWN_PAUSE_SECONDS = 10


class UserApiThrottle(UserRateThrottle):
    """The global per-user API rate limit (settings API_RATE_LIMIT; anonymous callers by address).

    Counts live in the shared cache. With the cache down the request goes through, unthrottled, and
    this process stops asking the cache for CACHE_DOWN_PAUSE_SECONDS: a rate limit is no reason to
    refuse service (the database, not the cache, is what a request needs)."""

    scope = "user"

    def allow_request(self, request: Request, view: APIView) -> bool:
        global _cache_down_until
        if time.monotonic() < _cache_down_until:
            return True
        try:
            return super().allow_request(request, view)
        except Exception as exc:
            if not is_unavailable(exc):
                raise
            logger.warning("API rate limit not applied: the cache is out of reach: %s", exc)
            _cache_down_until = time.monotonic() + CACHE_DOWN_PAUSE_SECONDS
            return True
