"""Input fields of the metrics API: a metric reference in a body, a known key in a list filter."""

from __future__ import annotations

from typing import Any, cast

import django_filters
from django.core.validators import EMPTY_VALUES, ProhibitNullCharactersValidator
from django.db.models import Model, QuerySet
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


class KnownKeyFilter(django_filters.CharFilter):  # type: ignore[misc]  # django-filter is untyped; --strict only
    """A list filter by a row's key that refuses a key naming no row — a 400 naming the parameter, as
    any unknown key in a request's input is — rather than answering an empty list (one EXISTS query)."""

    def __init__(self, *, model: type[Model], noun: str, **kwargs: Any) -> None:
        self.model = model
        self.noun = noun
        kwargs.setdefault("help_text", f"{noun.capitalize()} key.")
        super().__init__(**kwargs)

    def filter(self, qs: QuerySet[Any], value: Any) -> QuerySet[Any]:
        if value in EMPTY_VALUES:
            return qs
        if not self.model._default_manager.filter(key=value).exists():
            raise ApplicationError(f"Unknown {self.noun} '{value}'.", status=400, field=self.field_name)
        return cast("QuerySet[Any]", super().filter(qs, value))  # django-filter is untyped
