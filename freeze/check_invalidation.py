"""What makes the freeze check's cached facts (freeze.check_cache) stale, and the signals that catch it.

Any saved or deleted component, window, level (entry), override or exception; a program (its slug
scopes checks and names windows); a user (an override's answer names who opened it). Each replaces
the freeze generation, so the very next check reads the database again. save() and delete() send
the signals; bulk update(), bulk_create() and bulk_update() of the freeze models call
`freeze_data_changed` from their queryset (freeze.models.FreezeDataQuerySet). Raw SQL is not seen.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save

from core import read_cache
from freeze.check_cache import GENERATION_KEY
from freeze.models import Component, FreezeEntry, FreezeException, FreezeOverride, FreezeWindow
from program.models import Program

WATCHED = (Component, FreezeWindow, FreezeEntry, FreezeOverride, FreezeException, Program)


def freeze_data_changed(**kwargs) -> None:
    read_cache.bump(GENERATION_KEY)


def _user_saved(sender, update_fields=None, **kwargs) -> None:
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return  # a sign-in: nothing the check shows
    freeze_data_changed()


def connect() -> None:
    for model in WATCHED:
        name = model.__name__
        post_save.connect(freeze_data_changed, sender=model, dispatch_uid=f"freeze_check_cache.save.{name}")
        post_delete.connect(
            freeze_data_changed, sender=model, dispatch_uid=f"freeze_check_cache.delete.{name}"
        )
    user_model = get_user_model()
    post_save.connect(_user_saved, sender=user_model, dispatch_uid="freeze_check_cache.save.user")
    post_delete.connect(freeze_data_changed, sender=user_model, dispatch_uid="freeze_check_cache.delete.user")
