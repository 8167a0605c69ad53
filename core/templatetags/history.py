"""{% load history %}: `|history_words`, one history row (core.Transition) as a sentence with the
person's full name (core.audit.transition_sentence); `|history_words:"the incident"` names the subject."""

from __future__ import annotations

from django import template

from core.audit import transition_sentence
from core.models import Transition

register = template.Library()


@register.filter
def history_words(record: Transition, subject: str = "it") -> str:
    return transition_sentence(record, subject)
