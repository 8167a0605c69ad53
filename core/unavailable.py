"""When the database or the broker cannot be reached, a request gets 503 with Retry-After, never a 500."""

from __future__ import annotations

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from kombu.exceptions import OperationalError as BrokerOperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

RETRY_AFTER_SECONDS = 5
UNAVAILABLE_MESSAGE = "The service is briefly unavailable. Please try again in a few seconds."

# SQLSTATE classes that mean "cannot serve now" rather than "this request is wrong":
# 08 connection exception, 53 insufficient resources (53300 too many connections),
# 57P admin shutdown, crash shutdown, cannot connect now.
_UNAVAILABLE_SQLSTATES = ("08", "53", "57P")


def is_unavailable(exc: BaseException | None) -> bool:
    """True when `exc` says a backing service is out of reach, so retrying later can succeed.

    A failed connection attempt (refused, too many clients, pool timeout) carries no SQLSTATE; an
    OperationalError with another SQLSTATE (a deadlock, a program limit) is a real error and stays a 500.
    """
    if isinstance(exc, InterfaceError | BrokerOperationalError | RedisConnectionError | RedisTimeoutError):
        return True
    if isinstance(exc, OperationalError):
        sqlstate = getattr(exc.__cause__, "sqlstate", None)
        return sqlstate is None or sqlstate.startswith(_UNAVAILABLE_SQLSTATES)
    return False


def page_unavailable(request: HttpRequest) -> HttpResponse:
    # Rendered without the request on purpose: context processors (user, roles) would query the
    # database that is not there.
    response = HttpResponse(render_to_string("503.html", {"message": UNAVAILABLE_MESSAGE}), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
