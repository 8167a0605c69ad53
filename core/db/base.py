"""Django's PostgreSQL backend, with pooled connections checked for life without a round trip.

Django's pool check (CONN_HEALTH_CHECKS with a pool) sends an empty query on every checkout: one
round trip to the server per request that touches the database. Here a connection taken from the pool
is checked locally instead: its socket must not be readable. An idle connection receives nothing
unless the server is closing it — a restart, pg_terminate_backend, idle_session_timeout or a crashed
backend each send an error or end of stream first — so "readable while idle" means dead (at worst a
settings reload's parameter report, which costs one reconnection). Such a connection is closed and
handed back; the pool drops it and opens a replacement, and the next pooled one is checked the same
way. What neither check catches without waiting is a path that died silently (no FIN, no RST): the
empty query would hang there too. A connection that fails during a request makes that request a 503
(core.unavailable), and Django returns it to the pool as unusable, where it is discarded.
"""

from __future__ import annotations

import select
from typing import TYPE_CHECKING, Any

import psycopg
from django.db.backends.postgresql import base

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool


def peer_closed(connection: psycopg.Connection[Any]) -> bool:
    """True when the idle connection is gone or going: closed, broken, or data waiting unasked."""
    if connection.closed or connection.broken:
        return True
    # poll, not select: select refuses descriptors above 1023, which a busy process may hand out.
    poller = select.poll()
    try:
        poller.register(connection.pgconn.socket, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> psycopg.Connection[Any]:
        connection: psycopg.Connection[Any] = super().get_new_connection(conn_params)
        # Django's pool (a cached property since 5.1); the stub lacks it.
        pool: ConnectionPool[psycopg.Connection[Any]] | None = self.pool  # type: ignore[attr-defined]
        if pool is None:
            return connection
        # Every pooled connection may have been dropped (a server restart): try them all, then one more
        # (a new connection the pool opened).
        for _ in range(pool.max_size + 1):
            if not peer_closed(connection):
                return connection
            connection.close()
            pool.putconn(connection)
            connection = super().get_new_connection(conn_params)
        return connection
