from django.core.validators import ProhibitNullCharactersValidator
from rest_framework import serializers


class ReasonInput(serializers.Serializer):
    """The optional "why" that transitions record in their history."""

    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class KeyRelatedField(serializers.SlugRelatedField):
    """A related row named by its key or slug. NUL is refused before the lookup: PostgreSQL text cannot
    hold it, and the query would fail with a 500 instead of naming the field."""

    def to_internal_value(self, data):
        if isinstance(data, str):
            ProhibitNullCharactersValidator()(data)  # the check DRF's CharField runs
        return super().to_internal_value(data)
