"""Registering a metric whose meaning is fixed in code (the incident log's mttr, mttd, …) on first use.

definition_register is for people: a metric owner files a draft and activates it later. A metric that
an app writes itself has no owner to ask and must be usable at once, so this service registers it as
active version 1 — through the same checks (unit, bounds, OpenTelemetry name, no duplicate boundary)
and with the same audit rows (registered, activated) — and does nothing when the key exists.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from core.audit import transition_record
from metrics.models import MetricDefinition
from metrics.services.definitions import (
    EDITABLE_FIELDS,
    _default_min_value,
    _refuse_duplicate_boundary,
    _validate,
)


def definition_ensure_registered(*, data: dict[str, Any], reason: str) -> MetricDefinition:
    """The active (else latest) version of data["key"]; when no version exists, version 1 of `data`,
    registered and activated at once with no actor (the system), `reason` in both audit rows.

    Idempotent: an existing key is returned unchanged, whatever its fields say now. Two first uses at
    once queue on a transaction-scoped advisory lock on the key; the second finds the first's row."""
    key = data["key"]
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtext('metrics.definition_ensure'), hashtext(%s))", [key]
            )
        versions = MetricDefinition.objects.filter(key=key)
        existing = (
            versions.filter(status=MetricDefinition.Status.ACTIVE).first()
            or versions.order_by("-version").first()
        )
        if existing is not None:
            return existing
        definition = MetricDefinition(
            key=key, version=1, **{f: data[f] for f in EDITABLE_FIELDS if f in data}
        )
        if "min_value" not in data:
            definition.min_value = _default_min_value(definition.unit)
        _validate(definition)
        _refuse_duplicate_boundary(definition)
        definition.status = MetricDefinition.Status.ACTIVE
        definition.activated_at = timezone.now()
        definition.save()
        transition_record(subject=definition, action="registered", to_state="draft", reason=reason)
        transition_record(
            subject=definition, action="activated", from_state="draft", to_state="active", reason=reason
        )
    return definition
