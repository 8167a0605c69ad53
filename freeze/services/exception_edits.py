"""Filing and editing freeze exceptions: exception_create and exception_edit. The transitions an edit
may cause (back to submitted) go through the workflow's guard and history (exception_workflow)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TypedDict

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.roles import FRAMEWORK_ENGINEERS, require_role
from core.services.model_update import model_update
from freeze.models import Approval, Component, FreezeException, FreezeWindow
from freeze.selectors import level_at
from freeze.selectors.exceptions import approvals_enough, exception_allowed_actions
from freeze.services.approval_bar import approval_requirement_apply
from freeze.services.exception_workflow import (
    MSG_UNNECESSARY,
    acted_on,
    guard,
    lock,
    move,
    notify_approvers,
    refuse_by_level,
)
from freeze.services.expected_impacts import (
    ImpactInput,
    expected_impacts_complete_check,
    expected_impacts_set,
)
from metrics.models import MetricDefinition

Status = FreezeException.Status
MSG_ENDED = "The change window has already ended: the change end must be in the future."
EDITABLE = ("title", *FreezeException.MATERIAL_FIELDS)


class ExceptionChanges(TypedDict, total=False):
    """What exception_edit may change (EDITABLE, the affected metrics' keys and their expected
    impacts); a key left out keeps its value."""

    title: str
    change: str
    justification: str
    risk: str
    rollback_plan: str
    change_starts_at: datetime
    change_ends_at: datetime
    affected_metrics: list[str]
    expected_impacts: list[ImpactInput]


def _validate_change_window(window: FreezeWindow, starts: datetime, ends: datetime) -> None:
    if ends <= starts:
        raise ApplicationError(
            "The change end must be after the change start.", status=400, field="change_ends_at"
        )
    if ends <= timezone.now():
        raise ApplicationError(MSG_ENDED, status=400, field="change_ends_at")
    if starts < window.starts_at or ends > window.ends_at:
        raise ApplicationError(
            f"The change window must lie inside '{window.name}' ({window.starts_at:%Y-%m-%d %H:%M} – "
            f"{window.ends_at:%Y-%m-%d %H:%M} UTC).",
            status=400,
            field="change_starts_at" if starts < window.starts_at else "change_ends_at",
        )


def affected_metrics_resolve(keys: Iterable[str] | None) -> list[MetricDefinition]:
    """Metric keys → their active versions; a 400 naming `affected_metrics` for any unknown key (or one
    with no active version). Gates match by key, so the version only anchors the link."""
    if keys is None:
        return []
    if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
        raise ApplicationError(
            "affected_metrics must be a list of metric keys.", status=400, field="affected_metrics"
        )
    wanted = sorted({k.strip() for k in keys if k.strip()})
    found = {
        d.key: d
        for d in MetricDefinition.objects.filter(key__in=wanted, status=MetricDefinition.Status.ACTIVE)
    }
    unknown = [k for k in wanted if k not in found]
    if unknown:
        raise ApplicationError(
            f"No active metric with key {', '.join(repr(k) for k in unknown)}.",
            status=400,
            field="affected_metrics",
        )
    return [found[k] for k in wanted]


@transaction.atomic
def exception_create(
    *,
    actor: User,
    component: Component,
    window: FreezeWindow | None = None,
    title: str,
    change: str,
    justification: str,
    risk: str,
    rollback_plan: str,
    change_starts_at: datetime,
    change_ends_at: datetime,
    affected_metrics: list[str] | None = None,
    expected_impacts: list[ImpactInput] | None = None,
) -> FreezeException:
    """File a draft exception. The actor must be a framework engineer and becomes its requester (and
    an author, who never decides it). `expected_impacts` states, per affected metric, the direction
    and size expected (freeze.services.expected_impacts)."""
    require_role(actor, FRAMEWORK_ENGINEERS, "file freeze exceptions")
    metrics = affected_metrics_resolve(affected_metrics)
    if window is None:
        found = level_at(component, change_starts_at)
        if found.window is None:
            raise ApplicationError(
                MSG_UNNECESSARY.format(component=component.key, where="then: no freeze window is in force"),
                status=400,
                field="change_starts_at",
            )
        window = found.window
    _validate_change_window(window, change_starts_at, change_ends_at)
    refuse_by_level(component, window, change_starts_at)
    exception = FreezeException.objects.create(
        component=component,
        window=window,
        requester=actor,
        last_editor=actor,
        title=title,
        change=change,
        justification=justification,
        risk=risk,
        rollback_plan=rollback_plan,
        change_starts_at=change_starts_at,
        change_ends_at=change_ends_at,
    )
    exception.authors.add(actor)
    exception.affected_metrics.set(metrics)
    expected_impacts_set(exception, expected_impacts or [])
    transition_record(subject=exception, action="created", actor=actor, to_state=exception.status)
    return exception


def exception_edit(*, actor: User, exception: FreezeException, changes: ExceptionChanges) -> FreezeException:
    """The actor (a framework engineer) edits an open exception and becomes one of its authors, who
    never decide it.

    A material edit after submission returns it to submitted and dismisses every approval: what was
    approved is no longer what would ship. Any edit by someone whose approval stands dismisses that
    approval (and returns an approved exception to submitted if the rest no longer suffice). Saving
    unchanged values is no edit."""
    with transaction.atomic():
        exception = lock(exception)
        exception_allowed_actions(actor, exception).require("edit")
        guard(exception, "edit")
        changed = model_update(instance=exception, fields=EDITABLE, data=changes, save=False)
        if "affected_metrics" in changes and _metrics_set(exception, changes["affected_metrics"]):
            changed.append("affected_metrics")
        if ("expected_impacts" in changes or "affected_metrics" in changed) and expected_impacts_set(
            exception, changes.get("expected_impacts")
        ):
            changed.append("expected_impacts")
        if exception.status != Status.DRAFT and {"affected_metrics", "expected_impacts"} & set(changed):
            expected_impacts_complete_check(exception)
        if not changed:
            return exception
        _validate_change_window(exception.window, exception.change_starts_at, exception.change_ends_at)
        exception.edit()
        exception.last_editor = actor
        exception.authors.add(actor)
        exception._author_ids_cache = None  # the actor is an author from now on
        material = [f for f in changed if f in FreezeException.MATERIAL_FIELDS]
        standing = Approval.objects.filter(exception=exception, dismissed_at__isnull=True)
        if material and exception.status in (Status.SUBMITTED, Status.APPROVED):
            dismissed = standing.update(dismissed_at=timezone.now())
            approval_requirement_apply(exception)  # a resubmission is a submission: the rule as it is now
            _resubmit(exception, actor, f"material edit: {', '.join(material)}", dismissed)
            return exception
        dismissed = standing.filter(approver=actor).update(dismissed_at=timezone.now())
        if dismissed and exception.status == Status.APPROVED and not approvals_enough(exception):
            _resubmit(exception, actor, "edited by an approver, whose approval no longer counts", dismissed)
            return exception
        exception.save()
        data = {"fields": changed, **({"dismissed_approvals": dismissed} if dismissed else {})}
        transition_record(subject=exception, action="edited", actor=actor, data=data)
        acted_on(actor, exception)
    return exception


def _metrics_set(exception: FreezeException, keys: Iterable[str] | None) -> bool:
    """Set the affected metrics from keys; True if they changed. Not a material field: naming a metric
    changes which gates watch the exception, not what ships (gates listen from its next transition)."""
    metrics = affected_metrics_resolve(keys)
    before = set(exception.affected_metrics.values_list("pk", flat=True))
    if before == {m.pk for m in metrics}:
        return False
    exception.affected_metrics.set(metrics)
    return True


def _resubmit(exception: FreezeException, actor: User, reason: str, dismissed: int) -> None:
    move(exception, "resubmit", actor=actor, reason=reason, data={"dismissed_approvals": dismissed})
    notify_approvers(exception, f"Exception changed, review again: {exception.title}")
