"""Query-string filters shared by the API's list endpoints."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

import django_filters
from django.db.models import QuerySet


# django-filter ships no type information: its classes are Any to mypy.
class UtcDateTimeFilter(django_filters.IsoDateTimeFilter):  # type: ignore[misc]
    """An ISO 8601 time, compared in UTC.

    Python accepts UTC offsets up to ±23:59 but PostgreSQL only ±15:59, so a time sent as
    `…+17:18` must reach the query converted, or the database refuses it (a 500)."""

    def filter(self, qs: QuerySet[Any], value: datetime | None) -> QuerySet[Any]:
        return cast("QuerySet[Any]", super().filter(qs, value.astimezone(UTC) if value else value))
