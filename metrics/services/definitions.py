"""Registering and versioning metric definitions (docs/architecture.md, 'Metric definitions and versions')."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import TypedDict

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.roles import METRIC_OWNERS, require_role
from core.services.model_update import model_update
from core.transitions import require_state
from metrics import signals
from metrics.boundary import boundary_key, definition_changes
from metrics.models import MetricDefinition, Observation
from metrics.units import UnitError, never_negative, unit_dimension

EDITABLE_FIELDS = (
    "name",
    "description",
    "unit",
    "direction",
    "statistic",
    "sampling",
    "start_event",
    "end_event",
    "includes",
    "excludes",
    "owner_team",
    "min_value",
    "max_value",
    "expected_interval",  # how often values should arrive: the feeds page judges staleness by it
    "otel_name",
)


class DefinitionFields(TypedDict, total=False):
    """The fields a metric owner sets on a definition (EDITABLE_FIELDS), as the API's serializers and
    the pages' forms clean them; registering also needs `key`."""

    key: str
    name: str
    description: str
    unit: str
    direction: str
    statistic: str
    sampling: str
    start_event: str
    end_event: str
    includes: list[str]
    excludes: list[str]
    owner_team: str
    min_value: float | None
    max_value: float | None
    expected_interval: timedelta | None
    otel_name: str


Status = MetricDefinition.Status
# Allowed-from table of a definition version. Wording and ownership stay editable in every state (the
# meaning-bearing fields only on a draft); activating a draft also deprecates the version it replaces.
TRANSITIONS = {
    "edit": {Status.DRAFT, Status.ACTIVE, Status.DEPRECATED},
    "activate": {Status.DRAFT},
    "deprecate": {Status.ACTIVE},
}
ACTIONS = {"edit": "editing", "activate": "activating", "deprecate": "deprecating"}
# /metrics/new/ and /metrics/compare/ are pages: a metric with such a key would have no page of its own.
RESERVED_KEYS = frozenset({"new", "compare"})
MSG_DUPLICATE = "A definition measuring exactly this already exists: '{ref}'. Use it, or change the boundary."
MSG_MEANING_CHANGE = (
    "{ref} is {status}: its {fields} cannot change. Create a new version (POST …/versions/) instead."
)


def _require(definition: MetricDefinition, action: str) -> None:
    require_state(
        subject=definition.ref, state=definition.status, action=ACTIONS[action], allowed=TRANSITIONS[action]
    )


def _validate(definition: MetricDefinition, known_otel_name: str | None = None) -> None:
    """`known_otel_name`: the name the version it derives from already answers to (checked then)."""
    try:
        unit_dimension(definition.unit)
    except UnitError as exc:
        raise ApplicationError(str(exc), status=400, field="unit") from exc
    low, high = definition.min_value, definition.max_value
    for field, bound in (("min_value", low), ("max_value", high)):
        if bound is not None and not math.isfinite(bound):
            raise ApplicationError(f"{field} must be a finite number.", status=400, field=field)
    if low is not None and high is not None and low > high:
        raise ApplicationError("max_value must not be below min_value.", status=400, field="max_value")
    overlap = set(definition.includes) & set(definition.excludes)
    if overlap:
        raise ApplicationError(
            f"{', '.join(sorted(overlap))} cannot be both included and excluded.",
            status=400,
            field="excludes",
        )
    _validate_otel_name(definition, known_otel_name)


# OpenTelemetry's instrument name syntax: a letter, then letters, digits, _ . / - (at most 255).
OTEL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_./-]{0,254}")


def _validate_otel_name(definition: MetricDefinition, known: str | None) -> None:
    """The OTLP receiver maps a metric name to one metric: no two keys may answer to the same name."""
    name = definition.otel_name = (definition.otel_name or "").strip()
    if name and not OTEL_NAME.fullmatch(name):
        raise ApplicationError(
            "otel_name must be an OpenTelemetry instrument name: a letter, then letters, digits, _ . / - "
            "(at most 255 characters).",
            status=400,
            field="otel_name",
        )
    wanted = definition.otel_metric_name
    if wanted == known:
        return
    others = MetricDefinition.objects.exclude(key=definition.key).filter(
        Q(otel_name=wanted) | Q(otel_name="", key=wanted)
    )
    clash = others.order_by("key", "-version").first()
    if clash is not None:
        raise ApplicationError(
            f"The OpenTelemetry name '{wanted}' already maps to {clash.ref}; choose another otel_name.",
            status=400,
            field="otel_name" if name else "key",
        )


def _default_min_value(unit: str) -> float | None:
    """0 for a duration, count or rate, which cannot be negative; a client opts out with null."""
    try:
        return 0.0 if never_negative(unit) else None
    except UnitError:
        return None  # _validate names the unit


def _refuse_duplicate_boundary(definition: MetricDefinition) -> None:
    """Two active definitions that measure the same thing the same way make numbers ambiguous."""
    wanted = boundary_key(definition)
    for other in MetricDefinition.objects.filter(status=MetricDefinition.Status.ACTIVE).exclude(
        key=definition.key
    ):
        if boundary_key(other) == wanted:
            raise ApplicationError(MSG_DUPLICATE.format(ref=other.ref), extra={"existing": other.ref})


@transaction.atomic
def definition_register(*, actor: User, data: DefinitionFields) -> MetricDefinition:
    """Version 1 of a new metric, as a draft. The actor must be a metric owner."""
    require_role(actor, METRIC_OWNERS, "register metric definitions")
    key = data["key"]
    if key in RESERVED_KEYS:
        raise ApplicationError(
            f"'{key}' is reserved for a page; choose another key.", status=400, field="key"
        )
    if MetricDefinition.objects.filter(key=key).exists():
        raise ApplicationError(
            f"Metric '{key}' exists already; add a version instead.", field="key", extra={"existing": key}
        )
    definition = MetricDefinition(key=key, version=1, created_by=actor)
    model_update(instance=definition, fields=EDITABLE_FIELDS, data=data, save=False)
    if "min_value" not in data:
        definition.min_value = _default_min_value(definition.unit)
    _validate(definition)
    _refuse_duplicate_boundary(definition)
    definition.save()
    transition_record(subject=definition, action="registered", actor=actor, to_state=definition.status)
    return definition


@transaction.atomic
def definition_version_create(*, actor: User, key: str, changes: DefinitionFields) -> MetricDefinition:
    """Version n+1 as a draft: the latest version with `changes` applied. The actor must be a metric owner."""
    require_role(actor, METRIC_OWNERS, "create metric versions")
    latest = MetricDefinition.objects.select_for_update().filter(key=key).order_by("-version").first()
    if latest is None:
        raise ApplicationError(f"There is no metric '{key}'.", status=404, field="key")
    new = MetricDefinition(key=key, version=latest.version + 1, created_by=actor)
    for field in EDITABLE_FIELDS:
        setattr(new, field, changes.get(field, getattr(latest, field)))
    _validate(new, known_otel_name=latest.otel_metric_name)
    if not definition_changes(latest, new):
        raise ApplicationError(
            f"Nothing differs from {latest.ref}: a new version needs a change.", status=400
        )
    _refuse_duplicate_boundary(new)
    new.save()
    transition_record(
        subject=new,
        action="version_created",
        actor=actor,
        to_state=new.status,
        data={"changes": definition_changes(latest, new), "from": latest.ref},
    )
    return new


def meaning_fixed(definition: MetricDefinition) -> bool:
    """Whether the meaning fields (MetricDefinition.MEANING_FIELDS) may no longer change: once active
    or deprecated, and on a draft that holds data. Stored values were accepted in this meaning: a draft
    holding shadow data is as fixed as an active version. The admin shows them read-only then."""
    return definition.status != Status.DRAFT or Observation.objects.filter(definition=definition).exists()


@transaction.atomic
def definition_update(
    *, actor: User, definition: MetricDefinition, changes: DefinitionFields
) -> MetricDefinition:
    """Edit in place: anything on a draft; only wording and ownership once active or deprecated. The
    actor must be a metric owner."""
    require_role(actor, METRIC_OWNERS, "edit metric definitions")
    definition = MetricDefinition.objects.select_for_update().get(pk=definition.pk)
    _require(definition, "edit")
    before = MetricDefinition(**{f: getattr(definition, f) for f in EDITABLE_FIELDS})
    model_update(instance=definition, fields=EDITABLE_FIELDS, data=changes, save=False)
    if meaning_fixed(definition):
        touched = [f for f in MetricDefinition.MEANING_FIELDS if getattr(before, f) != getattr(definition, f)]
        if touched:
            raise ApplicationError(
                MSG_MEANING_CHANGE.format(
                    ref=definition.ref,
                    status=definition.status if definition.status != Status.DRAFT else "a draft with data",
                    fields=", ".join(touched),
                ),
                errors=[{"field": f, "message": "changes meaning: needs a new version"} for f in touched],
            )
    _validate(definition, known_otel_name=before.otel_name or definition.key)
    if definition.status != MetricDefinition.Status.DEPRECATED:
        _refuse_duplicate_boundary(definition)
    definition.save()
    changed = definition_changes(before, definition)
    if changed:
        transition_record(subject=definition, action="edited", actor=actor, data={"changes": changed})
    return definition


@transaction.atomic
def definition_activate(*, actor: User, definition: MetricDefinition) -> MetricDefinition:
    """Make a draft the active version of its key; the previously active version becomes deprecated.
    The actor must be a metric owner."""
    require_role(actor, METRIC_OWNERS, "activate metric definitions")
    versions = {d.pk: d for d in MetricDefinition.objects.select_for_update().filter(key=definition.key)}
    definition = versions[definition.pk]
    _require(definition, "activate")
    _refuse_duplicate_boundary(definition)
    previous = next((d for d in versions.values() if d.status == MetricDefinition.Status.ACTIVE), None)
    if previous is not None:
        previous.status = MetricDefinition.Status.DEPRECATED
        previous.save(update_fields=["status"])
        transition_record(
            subject=previous,
            action="deprecated",
            actor=actor,
            from_state="active",
            to_state="deprecated",
            reason=f"superseded by {definition.ref}",
        )
    definition.status = MetricDefinition.Status.ACTIVE
    definition.activated_at = timezone.now()
    definition.save(update_fields=["status", "activated_at"])
    transition_record(
        subject=definition, action="activated", actor=actor, from_state="draft", to_state="active"
    )
    if previous is not None:
        # Gates pinned to the old version learn they are stale (program listens; metrics imports nothing).
        signals.definition_superseded.send(sender=MetricDefinition, old_id=previous.pk, new_id=definition.pk)
    return definition


@transaction.atomic
def definition_deprecate(*, actor: User, definition: MetricDefinition, reason: str = "") -> MetricDefinition:
    """Retire the active version; its key then names no active version. The actor must be a metric owner."""
    require_role(actor, METRIC_OWNERS, "deprecate metric definitions")
    definition = MetricDefinition.objects.select_for_update().get(pk=definition.pk)
    _require(definition, "deprecate")
    previous = definition.status
    definition.status = Status.DEPRECATED
    definition.save(update_fields=["status"])
    transition_record(
        subject=definition,
        action="deprecated",
        actor=actor,
        from_state=previous,
        to_state=definition.status,
        reason=reason,
    )
    return definition
