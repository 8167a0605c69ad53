"""Query-string filters shared by the API's list endpoints."""

from __future__ import annotations

from datetime import UTC

import django_filters


class UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    """An ISO 8601 time, compared in UTC.

    Python accepts UTC offsets up to ±23:59 but PostgreSQL only ±15:59, so a time sent as
    `…+17:18` must reach the query converted, or the database refuses it (a 500)."""

    def filter(self, qs, value):
        return super().filter(qs, value.astimezone(UTC) if value else value)
