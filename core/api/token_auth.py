"""Token authentication with the lookup cached: the token's user, groups and permissions, by digest.

Every API request authenticates, and the lookup was one query per request (more when a write checked
roles or permissions). The cache holds the Token with its user, the user's group names and Django
permissions preloaded, under a SHA-256 digest of the key (the key itself never becomes a cache key),
for TOKEN_CACHE_SECONDS at most. Entries count only under the current auth generation
(core.read_cache), which core.api.token_invalidation replaces whenever a token, a user, a group or a
permission changes; the generation and the entry come back in one cache round trip.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import cache
from rest_framework.authentication import TokenAuthentication

from core import read_cache
from core.roles import group_names

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token
    from rest_framework.request import Request

logger = logging.getLogger(__name__)

GENERATION_KEY = read_cache.register("auth:generation")
ENTRY_PREFIX = "auth:token:"


def entry_key(token_key: str) -> str:
    return ENTRY_PREFIX + hashlib.sha256(token_key.encode()).hexdigest()


class CachedTokenAuthentication(TokenAuthentication):
    """One instance per request (DRF makes them so): `generations` belong to this request."""

    generations: dict[str, str] | None = None

    def authenticate(self, request: Request) -> tuple[User, Token] | None:
        answer = super().authenticate(request)
        if answer is not None and self.generations:
            # Every read cache's generation, read before anything the view reads from the database.
            setattr(getattr(request, "_request", request), read_cache.REQUEST_ATTRIBUTE, self.generations)
        return answer

    def authenticate_credentials(self, key: str) -> tuple[User, Token]:
        if not read_cache.enabled():
            return super().authenticate_credentials(key)
        entry = entry_key(key)
        try:
            found = cache.get_many([entry, *read_cache.GENERATION_KEYS])
        except Exception:  # an unreachable cache means the database answers
            logger.warning("token cache unreachable", exc_info=True)
            return super().authenticate_credentials(key)
        self.generations = {name: found[name] for name in read_cache.GENERATION_KEYS if name in found}
        generation = found.get(GENERATION_KEY)
        hit = found.get(entry)
        if generation is not None and hit is not None and hit[0] == generation:
            token = hit[1]
            return token.user, token
        if generation is None:
            generation = read_cache.current_generation(GENERATION_KEY)
        user, token = super().authenticate_credentials(key)  # 401 for unknown keys and inactive users
        # Loaded now so that they travel with the cached user: roles and permission checks of writes.
        group_names(user)
        user.get_all_permissions()
        if generation is not None:
            try:
                cache.set(entry, (generation, token), timeout=settings.TOKEN_CACHE_SECONDS)
            except Exception:
                logger.warning("token cache unreachable", exc_info=True)
        return user, token
