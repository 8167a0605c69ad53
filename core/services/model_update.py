"""The one way an update service applies its changes to a model instance (HackSoft's `model_update`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from django.db import models

M = TypeVar("M", bound=models.Model)


def model_update(
    *, instance: M, fields: Iterable[str], data: Mapping[str, Any], save: bool = True
) -> list[str]:
    """Set each of `fields` that `data` holds on `instance`; return the names whose value changed, in
    the order of `fields`. With `save`, writes only those (and any auto_now field), and only when
    something changed: an update that changes nothing writes nothing. Without it the caller saves,
    after the rest of its change."""
    changed = []
    for field in fields:
        if field in data and getattr(instance, field) != data[field]:
            setattr(instance, field, data[field])
            changed.append(field)
    if save and changed:
        stamped = [f.name for f in instance._meta.concrete_fields if getattr(f, "auto_now", False)]
        instance.save(update_fields=[*changed, *stamped])
    return changed
