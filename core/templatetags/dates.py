"""{% load dates %}: `|when`, a moment as people say it ("today 14:05 UTC", "3 Dec") in a <time>
element with the ISO moment in `datetime` and, on hover, in `title` (core.dates)."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.dates import iso_minute, when_words

register = template.Library()


@register.filter
def when(value: datetime | None, empty: str = "–") -> SafeString | str:
    if value is None:
        return empty
    return format_html(
        '<time datetime="{}" title="{}">{}</time>',
        value.isoformat(),
        iso_minute(value),
        when_words(value, timezone.now()),
    )
