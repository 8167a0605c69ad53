"""A claim kept alive while its holder runs: short enough that a dead worker's claim lapses within
seconds, renewed often enough that a live one never does.

The outbox claim and a notification delivery's claim both last OUTBOX_LEASE_SECONDS from their last
renewal; `kept_renewed` renews one from a thread while the work runs. A worker killed (SIGKILL, OOM,
its hard time limit) stops renewing with it, so its claims expire OUTBOX_LEASE_SECONDS later and the
sweep hands the work to another worker, instead of after the task's whole hard time limit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

# Renewals per lease: three may be missed (a database hiccup) before the claim lapses.
RENEWALS_PER_LEASE = 4


def lease_length() -> timedelta:
    return timedelta(seconds=settings.OUTBOX_LEASE_SECONDS)


@contextmanager
def kept_renewed(renew: Callable[[], object]) -> Iterator[None]:
    """Call `renew()` every OUTBOX_LEASE_SECONDS / 4 from a thread until the block ends."""
    stop = threading.Event()
    every = settings.OUTBOX_LEASE_SECONDS / RENEWALS_PER_LEASE

    def keep() -> None:
        try:
            while not stop.wait(every):
                try:
                    renew()
                except Exception as exc:  # the next renewal may succeed; the lease has room for three misses
                    logger.warning("lease renewal failed: %s", exc)
        finally:
            connection.close()  # this thread's connection goes back to the pool

    keeper = threading.Thread(target=keep, name="lease-keeper", daemon=True)
    keeper.start()
    try:
        yield
    finally:
        stop.set()
        # Not waited for without end: a renewal blocked on a row lock of this very thread's transaction
        # would never return. One still under way after this changes nothing: each renewal only extends a
        # claim not yet finished.
        keeper.join(timeout=every)
