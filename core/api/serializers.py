from __future__ import annotations

from typing import Any, TypeVar

from django.core.validators import ProhibitNullCharactersValidator
from django.db.models import Model
from rest_framework import serializers

_M = TypeVar("_M", bound=Model)


class ReasonInput(serializers.Serializer[dict[str, Any]]):
    """The optional "why" that transitions record in their history."""

    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class KeyRelatedField(serializers.SlugRelatedField[_M]):
    """A related row named by its key or slug. NUL is refused before the lookup: PostgreSQL text cannot
    hold it, and the query would fail with a 500 instead of naming the field."""

    def to_internal_value(self, data: Any) -> _M:
        if isinstance(data, str):
            ProhibitNullCharactersValidator()(data)  # the check DRF's CharField runs
        return super().to_internal_value(data)
