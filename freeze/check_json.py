"""JSON-ready values without DRF serializers, for the freeze check (the CI hot path).

Building the nested CheckOutput serializer cost more than the rest of a cached check (DRF deep-copies
its fields per instance). `plain` writes check_as_dict's values the way DRF does — times as ISO 8601
in UTC with "Z" for +00:00, choices as their values; tests hold the rendered answer equal to
CheckOutput's, which stays the schema (freeze.api_check).
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import Enum


def iso(moment: datetime) -> str:
    text = moment.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def plain(value):
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, Enum):
        return value.value
    return value
