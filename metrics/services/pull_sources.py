"""Registering, editing and removing Prometheus pull sources (metric owners only)."""

from __future__ import annotations

import string
from typing import TypedDict
from urllib.parse import urlsplit

from django.contrib.auth.models import User
from django.db import transaction

from core.audit import transition_record
from core.errors import ApplicationError
from core.roles import METRIC_OWNERS, require_role
from core.services.model_update import model_update
from metrics.models import (
    POINT_KIND_SAMPLINGS,
    MetricDefinition,
    PointKind,
    PullSource,
    System,
    Workload,
    point_kind_fits,
)
from metrics.units import UnitError, unit_factor

PLACEHOLDERS = frozenset({"workload", "system"})
MAX_STEP_SECONDS = 86_400
FIELDS = ("definition", "system", "base_url", "query", "unit", "step_seconds", "point_kind", "enabled")


class PullSourceFields(TypedDict, total=False):
    """A source's fields as the API cleans them: `definition` and `system` resolved from their keys
    (set at creation only), `workloads` as keys."""

    definition: MetricDefinition
    system: System
    base_url: str
    query: str
    unit: str
    step_seconds: int
    point_kind: str
    enabled: bool
    workloads: list[str]


def query_check(query: str) -> None:
    """400 naming `query` unless its only placeholders are {workload} and {system}.

    PromQL's own braces ({job="x"}) are written doubled ({{job="x"}}), as in str.format."""
    if not query or not query.strip():
        raise ApplicationError("query must not be empty.", status=400, field="query")
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(query) if name is not None}
    except ValueError as exc:
        raise ApplicationError(
            f'query is not a valid template ({exc}); write PromQL braces doubled: {{{{job="x"}}}}.',
            status=400,
            field="query",
        ) from exc
    unknown = sorted(names - PLACEHOLDERS)
    if unknown:
        raise ApplicationError(
            f"query has unknown placeholders {', '.join('{' + n + '}' for n in unknown)}; "
            "only {workload} and {system} are filled in (double PromQL's own braces).",
            status=400,
            field="query",
        )


def receiving_definition(definition: MetricDefinition) -> MetricDefinition:
    """The version a source's rows go to: they are ingested by key (metrics.services.pull), so the
    key's active version once there is one, whichever version the source was registered on."""
    active = MetricDefinition.objects.filter(
        key=definition.key, status=MetricDefinition.Status.ACTIVE
    ).first()
    return active or definition


def point_kind_check(point_kind: str, definition: MetricDefinition) -> None:
    """400 naming `point_kind` unless one point of this kind is what the definition counts as one
    observation (metrics.models.POINT_KIND_SAMPLINGS): pooled otherwise, an interval's average would
    weigh like one step."""
    if point_kind not in PointKind.values:
        raise ApplicationError(
            f"point_kind must be one of {', '.join(PointKind.values)}.", status=400, field="point_kind"
        )
    if point_kind_fits(point_kind, definition.sampling):
        return
    fitting = sorted(
        kind for kind, samplings in POINT_KIND_SAMPLINGS.items() if definition.sampling in samplings
    )
    raise ApplicationError(
        f"point_kind '{point_kind}' ({PointKind(point_kind).label}) does not fit {definition.ref}, which is "
        f"sampled {definition.sampling}: its points must be {' or '.join(fitting)}. Pull into a metric of "
        "that sampling, or declare what one point of the query really is.",
        status=400,
        field="point_kind",
    )


def _check(values: PullSourceFields, *, creating: bool) -> None:
    parts = urlsplit(values.get("base_url") or "")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ApplicationError(
            "base_url must be an http(s) URL of a Prometheus server.", status=400, field="base_url"
        )
    query_check(values.get("query") or "")
    step = values.get("step_seconds")
    if not isinstance(step, int) or isinstance(step, bool) or not 0 < step <= MAX_STEP_SECONDS:
        raise ApplicationError(
            f"step_seconds must be a whole number from 1 to {MAX_STEP_SECONDS} (a day).",
            status=400,
            field="step_seconds",
        )
    if values.get("unit"):
        try:
            # Converted to the definition's unit at ingest: refuse now what every pull would refuse.
            unit_factor(values["unit"], values["definition"].unit)
        except UnitError as exc:
            raise ApplicationError(str(exc), status=400, field="unit") from exc
    # A disabled source pulls nothing: an existing one that disagrees may still be switched off.
    if creating or values.get("enabled", True):
        point_kind_check(values.get("point_kind") or "", receiving_definition(values["definition"]))


def _workloads(keys: list[str] | None) -> list[Workload]:
    if not keys:
        raise ApplicationError(
            "workloads must name at least one workload key.", status=400, field="workloads"
        )
    found = {w.key: w for w in Workload.objects.filter(key__in=keys)}
    missing = sorted(set(keys) - set(found))
    if missing:
        raise ApplicationError(f"unknown workload '{missing[0]}'.", status=400, field="workloads")
    return [found[k] for k in dict.fromkeys(keys)]


def pull_source_create(*, actor: User, data: PullSourceFields) -> PullSource:
    """A Prometheus source of a metric's values on one system. The actor must be a metric owner."""
    require_role(actor, METRIC_OWNERS, "manage Prometheus pull sources")
    values = data.copy()
    values.pop("workloads", None)  # not a column: set below
    values.setdefault("step_seconds", 60)
    values.setdefault("point_kind", PointKind.AGGREGATE)
    _check(values, creating=True)
    workloads = _workloads(data.get("workloads"))
    with transaction.atomic():
        if PullSource.objects.filter(definition=values["definition"], system=values["system"]).exists():
            raise ApplicationError(
                f"{values['definition'].key} already has a pull source for {values['system'].key}.",
                status=409,
                field="system",
            )
        source = PullSource.objects.create(created_by=actor, **values)
        source.workloads.set(workloads)
        transition_record(
            subject=source, action="pull_source.create", actor=actor, data={"base_url": source.base_url}
        )
    return source


def pull_source_update(*, actor: User, source: PullSource, changes: PullSourceFields) -> PullSource:
    """Change a source's fields, checked as on creation. The actor must be a metric owner."""
    require_role(actor, METRIC_OWNERS, "manage Prometheus pull sources")
    with transaction.atomic():
        source = PullSource.objects.select_for_update().get(pk=source.pk)
        values: PullSourceFields = {
            "definition": source.definition,
            "system": source.system,
            "base_url": source.base_url,
            "query": source.query,
            "unit": source.unit,
            "step_seconds": source.step_seconds,
            "point_kind": source.point_kind,
            "enabled": source.enabled,
        }
        edits = changes.copy()
        edits.pop("definition", None)  # a source is of one metric on one system: those stay
        edits.pop("system", None)
        edits.pop("workloads", None)  # not a column: set below
        values.update(edits)
        _check(values, creating=False)
        workloads = _workloads(changes["workloads"]) if "workloads" in changes else None
        changed = sorted(model_update(instance=source, fields=FIELDS, data=values, save=False))
        if "enabled" in changed and source.enabled:
            source.consecutive_failures = 0  # re-enabled: a fresh start
        source.save()
        if workloads is not None:
            source.workloads.set(workloads)
            changed.append("workloads")
        transition_record(subject=source, action="pull_source.update", actor=actor, data={"fields": changed})
    return source


def pull_source_delete(*, actor: User, source: PullSource) -> None:
    """Removes the source only; what it pulled stays (observations are measurements, not config).
    The actor must be a metric owner."""
    require_role(actor, METRIC_OWNERS, "manage Prometheus pull sources")
    with transaction.atomic():
        source = PullSource.objects.select_for_update().get(pk=source.pk)
        transition_record(
            subject=source, action="pull_source.delete", actor=actor, data={"base_url": source.base_url}
        )
        source.delete()
