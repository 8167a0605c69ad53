"""Serializer fields of the metrics API."""

from __future__ import annotations

from typing import Any

from django.core.validators import ProhibitNullCharactersValidator
from rest_framework import serializers

from core.errors import ApplicationError
from metrics.models import MetricDefinition
from metrics.selectors.registry import definition_resolve


class MetricRefField(serializers.CharField):
    """A metric reference, `key` (its active version) or `key@N` (that version), given as input: it
    validates to the MetricDefinition. A malformed or unknown reference is a 400 naming this field, as
    any unknown key in a body or query is (core.api.serializers.KeyRelatedField); only a key in the URL
    path is a 404. `require_active` also refuses a draft or deprecated version."""

    def __init__(self, *, require_active: bool = False, **kwargs: Any) -> None:
        self.require_active = require_active
        kwargs.setdefault("help_text", "key (its active version) or key@N")
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> MetricDefinition:  # type: ignore[override]  # a row, not text
        ref = super().to_internal_value(data)
        # CharField runs its validators after this method; NUL must be refused before the lookup
        # (PostgreSQL text cannot hold it: the query would fail with a 500 instead of naming the field).
        ProhibitNullCharactersValidator()(ref)
        try:
            return definition_resolve(
                ref, field=self.field_name or "metric", require_active=self.require_active
            )
        except ApplicationError as exc:
            raise serializers.ValidationError(exc.message, code="invalid") from None

    def to_representation(self, value: Any) -> str:
        return value.ref if isinstance(value, MetricDefinition) else str(value)
