"""What makes a cached token lookup (core.api.token_auth) stale, and the signals that catch it.

A token created, rotated or deleted; a user saved (deactivated, renamed, made superuser) or deleted;
a user's groups or direct permissions changed; a group's permissions changed, a group renamed or
deleted; a permission changed. Each replaces the auth generation, so every cached lookup is read
again from the database on its next use. Such changes are rare next to API reads; a sign-in only
updates last_login, which nothing cached depends on, so it keeps the cache.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db.models import Model
from django.db.models.signals import m2m_changed, post_delete, post_save
from rest_framework.authtoken.models import Token

from core import read_cache
from core.api.token_auth import GENERATION_KEY

M2M_CHANGES = {"post_add", "post_remove", "post_clear"}


def auth_changed(**kwargs: Any) -> None:
    read_cache.bump(GENERATION_KEY)


def _user_saved(sender: type[Model], update_fields: frozenset[str] | None = None, **kwargs: Any) -> None:
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return
    auth_changed()


def _membership_changed(sender: type[Model], action: str, **kwargs: Any) -> None:
    if action in M2M_CHANGES:
        auth_changed()


def connect() -> None:
    user_model = get_user_model()
    for saved in (Token, Group, Permission):
        post_save.connect(auth_changed, sender=saved, dispatch_uid=f"auth_cache.save.{saved.__name__}")
    for deleted in (Token, Group, Permission, user_model):
        post_delete.connect(
            auth_changed, sender=deleted, dispatch_uid=f"auth_cache.delete.{deleted.__name__}"
        )
    post_save.connect(_user_saved, sender=user_model, dispatch_uid="auth_cache.save.user")
    for through in (
        user_model.groups.through,
        user_model.user_permissions.through,
        Group.permissions.through,
    ):
        m2m_changed.connect(
            _membership_changed, sender=through, dispatch_uid=f"auth_cache.m2m.{through.__name__}"
        )
