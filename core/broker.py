"""The Redis transport the Celery app uses: kombu's, except that a channel whose connection has been
closed says so with a connection error instead of an AttributeError (issue 28).

kombu 5.7's Redis channel drops its connection pool when it closes and makes a new one on demand from
its transport's connection (`Channel._connparams` reads `self.connection.client.hostname`). Once the
worker's consumer has closed a lost connection, that client is None. A late acknowledgement of a task
that was running across the outage, or a restore or publish on such a channel, then raised
`AttributeError: 'NoneType' object has no attribute 'hostname'`: not a connection error, so Celery took
it as unrecoverable and the worker exited for good. As a connection error it is what it is: Celery
logs "Couldn't ack" and keeps reconnecting, and the message, never acknowledged, is re-sent by the
outbox sweep (core.outbox) or handed out again by Redis.

Selected by CELERY_BROKER_TRANSPORT (config/settings/base.py) for every redis:// broker URL.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

CLOSED = "the broker connection of this channel was closed"


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection is None or self.connection.client is None:
            raise RedisConnectionError(CLOSED)
        # kombu leaves _connparams unannotated.
        return super()._connparams(asynchronous=asynchronous)  # type: ignore[no-untyped-call,no-any-return]


class Transport(kombu_redis.Transport):
    Channel = Channel

    @property
    def supports_batch_publish(self) -> bool:
        # Closed: publish one by one, which reaches Channel._connparams and its connection error.
        return self.client is not None and bool(super().supports_batch_publish)
