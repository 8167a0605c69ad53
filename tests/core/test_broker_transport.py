"""The broker transport (core/broker.py): a message whose channel's connection has been closed cannot be
acknowledged, and says so with a connection error, which Celery's consumer survives, instead of the
AttributeError that stopped the worker for good (issue 28). A real Redis of the test's own."""

from __future__ import annotations

import logging

import pytest
from kombu import Connection, Queue
from redis.exceptions import ConnectionError as RedisConnectionError

from tests.core.faults.harness import Redis

pytestmark = pytest.mark.services


def _a_message_on_a_closed_connection(tmp_path, transport: str | None):
    """A message received and not yet acknowledged; then Redis is killed and the connection closed, as
    the worker's consumer does before reconnecting, and the channel holds no connection pool (kombu makes
    one again on demand)."""
    redis = Redis(tmp_path)
    redis.start_on_a_free_port()
    connection = Connection(redis.url, transport=transport)
    queue = Queue("busy")
    with connection.Producer() as producer:
        producer.publish({"task": "t"}, routing_key="busy", declare=[queue])
    received = []
    channel = connection.channel()
    connection.Consumer(
        queue, channel=channel, callbacks=[lambda _body, message: received.append(message)]
    ).consume()
    connection.drain_events(timeout=5)
    redis.stop()
    connection.close()
    channel._disconnect_pools()
    return received[0], connection


def test_stock_kombu_raises_the_attribute_error_of_the_report(tmp_path):
    message, _ = _a_message_on_a_closed_connection(tmp_path, transport=None)
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'hostname'"):
        message.ack()


def test_our_transport_raises_a_connection_error_that_celery_logs_and_survives(tmp_path, caplog):
    message, connection = _a_message_on_a_closed_connection(tmp_path, transport="core.broker:Transport")
    with pytest.raises(RedisConnectionError):
        message.ack()
    # What Celery's request does with a late acknowledgement: a connection error is logged, not raised.
    message.ack_log_error(logging.getLogger("celery.worker.request"), connection.connection_errors)
    assert "Couldn't ack" in caplog.text
