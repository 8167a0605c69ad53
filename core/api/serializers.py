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


class IdRelatedField(serializers.PrimaryKeyRelatedField[_M]):
    """A related row named by its integer id. DRF's own field hands any JSON number to the lookup, where
    Django's int() takes 1.5 as row 1 and 1e400 (read as infinity) raises OverflowError, a 500. Here the
    id is read first as DRF's IntegerField reads an integer (1, 1.0 or "1"; never 1.5, infinity or true),
    so anything else is a 400 naming this field."""

    default_error_messages = {"invalid": serializers.IntegerField.default_error_messages["invalid"]}

    def to_internal_value(self, data: Any) -> _M:
        try:
            number = serializers.IntegerField().to_internal_value(data)
        except serializers.ValidationError:
            self.fail("invalid")
        return super().to_internal_value(number)  # type: ignore[arg-type]  # the stub types data as the row
