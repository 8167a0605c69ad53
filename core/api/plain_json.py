"""JSON-ready values written as DRF's serializers write them, for hot read paths that skip them.

Building a nested serializer per request cost more than the rest of a cached freeze check (DRF
deep-copies its fields per instance), and a ModelSerializer more than the observations page's query.
`plain` writes values the way DRF does — times as ISO 8601 in UTC with "Z" for +00:00, choices as
their values; the callers' tests hold their answers equal to the serializers', which stay the schema.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import Enum
from typing import Any


def iso(moment: datetime) -> str:
    text = moment.astimezone(UTC).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, Enum):
        return value.value
    return value
