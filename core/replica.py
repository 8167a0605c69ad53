"""Read replicas: heavy reads (comparisons, metric and registry pages) go to DATABASE_REPLICA_URL.

Only the views named in REPLICA_READ_VIEWS read from the replica, only on GET/HEAD, and only the
metrics app's tables (REPLICA_APPS): those views are pure reads, so a replica a moment behind the primary shows a slightly older page, never a wrong write. Every
other read stays on the primary, because the code that reads there may write next (services lock and
re-read what they change).

Read-your-writes for people: a browser that has just written (any non-GET answered below 400) carries
the `rt_primary` cookie for REPLICA_PIN_SECONDS, and its reads stay on the primary until it expires, so
the page a form redirects to shows the change. Scripts that push and then compare at once may see the
replica's lag (seconds at most on a healthy stream); docs/scaling.md says so.

Without DATABASE_REPLICA_URL there is no "replica" alias (REPLICA_READS is off) and everything reads
from the primary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model
from django.http import HttpRequest, HttpResponse

REPLICA = "replica"
PIN_COOKIE = "rt_primary"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# Only the registry's own tables: the bulk of every heavy read. Users, tokens, sessions and the
# notifications badge stay on the primary, so a token or a login made a moment ago always works.
REPLICA_APPS = frozenset({"metrics"})

_reads_from_replica: ContextVar[bool] = ContextVar("reads_from_replica", default=False)


def read_connection() -> BaseDatabaseWrapper:
    """The connection a raw-SQL registry read should use: the replica inside `replica_reads()` when one
    is configured, else the primary. The ORM gets the same choice from ReplicaRouter."""
    if _reads_from_replica.get() and replica_configured():
        return connections[REPLICA]
    return connections[DEFAULT_DB_ALIAS]


def replica_configured() -> bool:
    return settings.REPLICA_READS and REPLICA in connections.settings


@contextmanager
def replica_reads() -> Iterator[None]:
    """Within this block, ORM reads go to the replica when one is configured."""
    token = _reads_from_replica.set(True)
    try:
        yield
    finally:
        _reads_from_replica.reset(token)


class ReplicaRouter:
    """Reads inside `replica_reads()` go to the replica; everything else to the primary."""

    def db_for_read(self, model: type[Model], **hints: Any) -> str | None:
        if _reads_from_replica.get() and model._meta.app_label in REPLICA_APPS and replica_configured():
            return REPLICA
        return None

    def db_for_write(self, model: type[Model], **hints: Any) -> str | None:
        return None

    def allow_relation(self, obj1: Model, obj2: Model, **hints: Any) -> bool | None:
        # The replica holds the same rows: an object read there may relate to one read from the primary.
        return True

    def allow_migrate(
        self, db: str, app_label: str, model_name: str | None = None, **hints: Any
    ) -> bool | None:
        # The replica follows the primary's schema by replication, never by migrate.
        return db != REPLICA


class ReplicaReadsMiddleware:
    """Read from the replica in the views of REPLICA_READ_VIEWS on GET/HEAD, unless the browser is pinned.

    Last in MIDDLEWARE: the switch is set in process_view, after every other middleware has read the
    session and the user from the primary, and reset when the response (rendered by then) comes back.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            response = self.get_response(request)
        finally:
            token = getattr(request, "_replica_token", None)
            if token is not None:
                _reads_from_replica.reset(token)
        if request.method not in SAFE_METHODS and response.status_code < 400 and replica_configured():
            response.set_cookie(
                PIN_COOKIE, "1", max_age=settings.REPLICA_PIN_SECONDS, httponly=True, samesite="Lax"
            )
        return response

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., HttpResponse],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> None:
        if _eligible(request):
            request._replica_token = _reads_from_replica.set(True)  # type: ignore[attr-defined]


def _eligible(request: HttpRequest) -> bool:
    if request.method not in ("GET", "HEAD") or not replica_configured():
        return False
    if request.COOKIES.get(PIN_COOKIE):
        return False
    match = request.resolver_match
    return match is not None and match.view_name in settings.REPLICA_READ_VIEWS
