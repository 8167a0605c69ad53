"""An app's own metrics, registered by the app itself on first use (the incident log's mttr, mttd…).

`definition_register` is a metric owner's act: a draft, checked against every rule, activated later.
An app that writes values of its own metrics needs them active before its first value, with no user
acting. This service is that path, under the same field rules (`_validate`), so no app writes
MetricDefinition rows past the registry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.audit import transition_record
from metrics.models import MetricDefinition
from metrics.services.definitions import EDITABLE_FIELDS, _default_min_value, _validate


def definitions_ensure_registered(
    *, specs: Sequence[Mapping[str, Any]], owner_team: str, reason: str
) -> list[MetricDefinition]:
    """Version 1 of each metric in `specs` (a `key` and editable fields), registered active at once where
    no version of that key exists yet; a key that has versions is left as it is. Returns the versions
    created. No role is checked: the caller is the app's own code, not a user; the audit row says
    `reason`. Safe when two first uses race: the second finds the first's row."""
    known = set(
        MetricDefinition.objects.filter(key__in=[spec["key"] for spec in specs]).values_list("key", flat=True)
    )
    created = []
    for spec in specs:
        if spec["key"] in known:
            continue
        definition = MetricDefinition(
            key=spec["key"],
            version=1,
            owner_team=owner_team,
            status=MetricDefinition.Status.ACTIVE,
            activated_at=timezone.now(),
            **{name: spec[name] for name in EDITABLE_FIELDS if name in spec and name != "owner_team"},
        )
        if "min_value" not in spec:
            definition.min_value = _default_min_value(definition.unit)
        _validate(definition)
        try:
            with transaction.atomic():
                definition.save()
                transition_record(
                    subject=definition, action="registered", to_state=definition.status, reason=reason
                )
        except IntegrityError:  # registered meanwhile by a concurrent first use
            continue
        created.append(definition)
    return created
