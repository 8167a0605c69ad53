"""Transactional outbox: a side effect is a row written in the transaction of the change that causes it.

`outbox_add` writes the row; after the commit it is published to Celery, and `outbox_sweep` (beat, every
OUTBOX_SWEEP_SECONDS) publishes again whatever no worker finished, until one does. So a broker outage
never turns a committed write into an error, and a lost message (Redis restart, dead worker) only
delays its follow-up. Without a broker (`make run`, most tests) publishing runs the task in-process.

A worker claims a message with a lease before running it and renews it while the task runs
(core.leases): a copy of a message already finished or held by a live lease does nothing, and an
expired lease, whose holder stopped renewing because it was killed, is taken over.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import orjson
from celery import Task
from celery.exceptions import Reject, Retry, SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from kombu.exceptions import KombuError
from kombu.utils.imports import symbol_by_name

from core.leases import kept_renewed, lease_length
from core.models import OutboxMessage
from core.unavailable import is_unavailable

logger = logging.getLogger(__name__)

# A message published this many times without finishing (about four hours of re-sends at the defaults) is given up: something
# is wrong with it (a task that always overruns its hard time limit). The sweep marks it finished with an
# error and logs it, which also frees its coalescing key for the next change.
MAX_SENDS = 48
# The sweep leaves a message this young to its after-commit publish, which is under way.
JUST_CREATED = timedelta(seconds=5)
# After a failed publish, new messages of this process wait for the sweep this long.
BROKER_PAUSE_SECONDS = 10
# Each re-send of a message still unfinished waits twice as long as the one before, up to this many times
# OUTBOX_RESEND_AFTER: a lost message is sent again soon, while one merely waiting in a long queue is not
# copied into it every OUTBOX_RESEND_AFTER (a copy does nothing, but it costs a claim and a send).
RESEND_BACKOFF_MAX = 16


# Celery ships no type information: Task is Any to mypy.
class OutboxTask(Task):  # type: ignore[misc]
    """A task run for an outbox message claims it first and marks it finished when it returns.

    The message id travels as the `outbox_id` keyword; a direct `.delay()` without it runs plainly.
    """

    # The run signature lacks `outbox_id`, so Celery's publish-time argument check would refuse it.
    typing = False

    def __call__(self, *args: Any, outbox_id: int | None = None, **kwargs: Any) -> Any:
        # self.run, not super().__call__: the worker has already pushed the request context that
        # retries count on, and Task.__call__ would replace it with an empty one.
        if outbox_id is None:
            return self.run(*args, **kwargs)
        owner = self.request.id or ""
        if not outbox_claim(message_id=outbox_id, owner=owner, lease=lease_length()):
            return None
        try:
            if self.request.is_eager:  # in this process: no worker of its own to die
                result = self.run(*args, **kwargs)
            else:
                with kept_renewed(lambda: outbox_renew(message_id=outbox_id, owner=owner)):
                    result = self.run(*args, **kwargs)
        except Retry as retry:
            outbox_retry_at(message_id=outbox_id, when=retry.when, lease=lease_length())
            raise
        except Exception as exc:
            # A passing fault (database or broker out of reach, a soft time limit, a retry that could not
            # be published) leaves the message alone: its lease runs out and the sweep sends it again.
            if not _is_passing_fault(exc):
                outbox_finish(message_id=outbox_id, error=f"{exc.__class__.__name__}: {exc}")
            raise
        outbox_finish(message_id=outbox_id)
        return result


def _is_passing_fault(exc: Exception) -> bool:
    return is_unavailable(exc) or isinstance(exc, Reject | SoftTimeLimitExceeded)


def queue_options(queue: str) -> dict[str, Any]:
    """Celery options for a task routed to this queue (CELERY_TASK_ROUTES): its time limits and the
    outbox base."""
    soft, hard = settings.TASK_TIME_LIMITS[queue]
    return {"base": OutboxTask, "soft_time_limit": soft, "time_limit": hard}


def outbox_add(*, task: str, args: Sequence[Any] = (), key: str | None = None) -> int | None:
    """Record that `task(*args)` must run once this transaction commits; publish it after the commit.

    With a key, a message with that key not yet started absorbs this one (returns None): it has
    not read anything yet, so it will see this change too. Its row is locked until this transaction
    ends, so a worker cannot start it before this change is visible.
    """
    if key is None:
        message_id = OutboxMessage.objects.create(task=task, args=list(args)).pk
    else:
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                INSERT INTO {OutboxMessage._meta.db_table} (task, args, key, created_at, send_count, lease_owner, last_error)
                VALUES (%s, %s::jsonb, %s, now(), 0, '', '')
                ON CONFLICT (key) WHERE done_at IS NULL AND started_at IS NULL AND key IS NOT NULL
                DO UPDATE SET created_at = {OutboxMessage._meta.db_table}.created_at
                RETURNING id, xmax = 0
                """,
                [task, _json(args), key],
            )
            message_id, inserted = cursor.fetchone()
        if not inserted:
            return None
    transaction.on_commit(lambda: _publish_after_commit(message_id))
    return message_id


# Monotonic time until which this process leaves new messages to the sweep: a publish to a broker
# that is down costs ~2 s (the Redis client's own retries), paid by one request, not by every one.
_paused_until = 0.0


def _publish_after_commit(message_id: int) -> None:
    global _paused_until
    if time.monotonic() < _paused_until:
        return
    if not _publish([message_id]).reached_broker:
        _paused_until = time.monotonic() + BROKER_PAUSE_SECONDS


def _json(args: Sequence[Any]) -> str:
    return orjson.dumps(list(args)).decode()


def outbox_publish(*, message_ids: Sequence[int]) -> int:
    """Hand unfinished messages to the broker; returns how many went. A broker error is logged and
    leaves the rest to the sweep: the change they follow is committed already."""
    return _publish(message_ids).sent


class _Published(NamedTuple):
    sent: int
    reached_broker: bool


def _publish(message_ids: Sequence[int]) -> _Published:
    sent, reached_broker = [], True
    for message in OutboxMessage.objects.filter(pk__in=message_ids, done_at__isnull=True).order_by("pk"):
        try:
            # kombu leaves symbol_by_name unannotated.
            symbol_by_name(message.task).apply_async(  # type: ignore[no-untyped-call]
                args=message.args, kwargs={"outbox_id": message.pk}, retry=False
            )
        except (KombuError, OSError) as exc:
            logger.warning("outbox: broker unavailable, %s left for the sweep: %s", message, exc)
            reached_broker = False
            break
        sent.append(message.pk)
    if sent:
        OutboxMessage.objects.filter(pk__in=sent).update(
            sent_at=timezone.now(), send_count=F("send_count") + 1
        )
    return _Published(len(sent), reached_broker)


def outbox_sweep(*, now: datetime | None = None, limit: int = 500) -> int:
    """Periodic: publish again each unfinished message whose last publish is older than
    OUTBOX_RESEND_AFTER (doubled for each send after the first, see RESEND_BACKOFF_MAX) and whose lease
    (if any) has expired. Two sweeps at once pick disjoint rows (SKIP LOCKED), so none is published twice
    by them. Returns how many were published."""
    now = now or timezone.now()
    with transaction.atomic():
        due = list(
            OutboxMessage.objects.select_for_update(skip_locked=True)
            .filter(done_at__isnull=True, send_count__lt=MAX_SENDS)
            .filter(Q(sent_at__isnull=True, created_at__lt=now - JUST_CREATED) | _resend_due(now))
            .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
            .order_by(F("sent_at").asc(nulls_first=True), "pk")
            .values_list("pk", flat=True)[:limit]
        )
        sent = outbox_publish(message_ids=due)
    _give_up_on_exhausted(now)
    OutboxMessage.objects.filter(done_at__lt=now - timedelta(days=settings.OUTBOX_KEEP_DAYS)).delete()
    return sent


def _resend_due(now: datetime) -> Q:
    """Sent once: due OUTBOX_RESEND_AFTER after; sent n times: 2**(n-1) times that, at most RESEND_BACKOFF_MAX."""
    after = timedelta(seconds=settings.OUTBOX_RESEND_AFTER)
    due, sends, factor = Q(send_count__lte=1, sent_at__lt=now - after), 2, 2
    while factor < RESEND_BACKOFF_MAX:
        due |= Q(send_count=sends, sent_at__lt=now - after * factor)
        sends, factor = sends + 1, factor * 2
    return due | Q(send_count__gte=sends, sent_at__lt=now - after * RESEND_BACKOFF_MAX)


def _give_up_on_exhausted(now: datetime) -> None:
    exhausted = OutboxMessage.objects.filter(done_at__isnull=True, send_count__gte=MAX_SENDS).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    )
    for message in exhausted:
        logger.error("outbox: %s was sent %d times without finishing; given up", message, message.send_count)
    exhausted.update(done_at=now, lease_until=None, last_error=f"given up after {MAX_SENDS} sends")


def outbox_claim(*, message_id: int, owner: str, lease: timedelta) -> bool:
    """Take the message for one run. False when it is finished or a live lease of another task holds
    it. The same task id keeps its lease: that is a retry of this run, or this message handed out
    again by the broker because its worker died (acks_late; the visibility timeout exceeds every
    hard time limit, so the earlier run is over)."""
    now = timezone.now()
    return bool(
        OutboxMessage.objects.filter(pk=message_id, done_at__isnull=True)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now) | Q(lease_owner=owner))
        .update(started_at=now, lease_until=now + lease, lease_owner=owner)
    )


def outbox_renew(*, message_id: int, owner: str) -> None:
    """The running task still holds its claim: extend it by a lease from now."""
    OutboxMessage.objects.filter(pk=message_id, done_at__isnull=True, lease_owner=owner).update(
        lease_until=timezone.now() + lease_length()
    )


def outbox_retry_at(*, message_id: int, when: datetime | float | None, lease: timedelta) -> None:
    """The task asked Celery for a retry: keep the lease past the retry, and the sweep away until then."""
    now = timezone.now()
    at = when if isinstance(when, datetime) else now + timedelta(seconds=float(when or 0))
    OutboxMessage.objects.filter(pk=message_id, done_at__isnull=True).update(
        lease_until=at + lease, sent_at=at
    )


def outbox_finish(*, message_id: int, error: str = "") -> None:
    OutboxMessage.objects.filter(pk=message_id, done_at__isnull=True).update(
        done_at=timezone.now(), lease_until=None, last_error=error[:2000]
    )
