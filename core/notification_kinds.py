"""Kinds of notice: the small set people choose a channel for and webhook endpoints filter on.

An event name is `<subject>.<what happened>`; its kind follows from the subject, so a new `gate.*`
event is a gate notice without touching this module. EVENTS lists today's events by name, for the
README and for validating the names a webhook endpoint may filter on (an unknown name is a typo).
"""

from __future__ import annotations

from django.db import models


class Kind(models.TextChoices):
    GATES = "gates", "Gates"
    EXCEPTIONS = "exceptions", "Freeze exceptions"
    OVERRIDES = "overrides", "Break-glass overrides"
    INCIDENTS = "incidents", "Incidents"
    FEEDS = "feeds", "Stale metric feeds"
    OTHER = "other", "Other notices"


_BY_SUBJECT = {
    "gate": Kind.GATES,
    "exception": Kind.EXCEPTIONS,
    "override": Kind.OVERRIDES,
    "incident": Kind.INCIDENTS,
    "feed": Kind.FEEDS,
}

# Every event the apps send today, by kind (grep `notification_send(` and the apps' notify helpers).
EVENTS: dict[str, Kind] = {
    "gate.ready": Kind.GATES,
    "gate.decided": Kind.GATES,
    "gate.stale": Kind.GATES,
    "exception.submitted": Kind.EXCEPTIONS,
    "exception.decided": Kind.EXCEPTIONS,
    "exception.expiring": Kind.EXCEPTIONS,
    "exception.expired": Kind.EXCEPTIONS,
    "override.opened": Kind.OVERRIDES,
    "override.reviewed": Kind.OVERRIDES,
    "override.overdue": Kind.OVERRIDES,
    "incident.filed": Kind.INCIDENTS,
    "incident.resolved": Kind.INCIDENTS,
    "incident.reopened": Kind.INCIDENTS,
    "incident.mitigated": Kind.INCIDENTS,
    "incident.refired": Kind.INCIDENTS,
    "feed.stale": Kind.FEEDS,
}


def kind_of(event: str) -> Kind:
    return _BY_SUBJECT.get(event.split(".", 1)[0], Kind.OTHER)


def event_filter_known(name: str) -> bool:
    """Whether a webhook endpoint may filter on `name`: a kind or an event name listed above."""
    return name in Kind.values or name in EVENTS
