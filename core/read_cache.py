"""Generation keys for read caches: one cache key per kind of data, replaced on every change to it.

A cached entry stores the generation it was computed under and counts only while that generation is
current, so one write invalidates every entry at once and in every process that shares the cache.
A reader reads the generation *before* the database; a writer replaces it right away and again after
its transaction commits. Either way an entry computed from data older than a committed change carries
an older generation: the immediate bump covers readers in the same process before the commit (tests
run inside one transaction), the one after commit covers readers that read the generation between the
first bump and the commit.

The cache is only as shared as the default cache: with Redis (CACHE_URL) every worker sees every
bump. READ_CACHE is therefore on by default only with CACHE_URL set. A cache that cannot be reached
makes readers fall back to the database (never a 503 for a cache); a bump that cannot be written is
logged, and entries expire after their TTL anyway.
"""

from __future__ import annotations

import logging
import secrets

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

logger = logging.getLogger(__name__)


def enabled() -> bool:
    return settings.READ_CACHE


def generation(key: str) -> str | None:
    """The generation to read cached entries under; None: do not cache (off, or unreachable)."""
    return current_generation(key) if enabled() else None


def new_generation() -> str:
    return secrets.token_hex(8)


def current_generation(key: str) -> str | None:
    """The generation now in force, created if the cache lost it; None when the cache is unreachable."""
    try:
        generation: str | None = cache.get(key)
        if generation is None:
            cache.add(key, new_generation(), timeout=None)
            generation = cache.get(key)
        return generation
    except Exception:  # any cache failure means "do not cache", never a failed request
        logger.warning("read cache unreachable; reading %s from the database", key, exc_info=True)
        return None


def bump(key: str) -> None:
    """Invalidate every entry under `key`'s generation: now, and again once the transaction commits."""
    _replace(key)
    transaction.on_commit(lambda: _replace(key))


def _replace(key: str) -> None:
    try:
        cache.set(key, new_generation(), timeout=None)
    except Exception:
        logger.error("read cache generation %s not replaced; entries expire by their TTL", key, exc_info=True)
