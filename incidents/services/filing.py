"""Filing and updating incidents. Resolving is an update that sets resolved_at (incident_resolve is the
short form): one path, so an edit of a resolved incident's times corrects its evidence the same way.

Framework engineers and program leads file and update (no new role: the people who fix the stack are
the engineers, and leads triage). Each change is audited in its transaction; the owner team is told
after commit (core.notifications → core.outbox).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.notifications import notification_send
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS, has_role
from core.services.inbox import notifications_mark_read_for
from core.services.model_update import model_update
from freeze.models import Component
from incidents import evidence
from incidents.models import TIME_FIELDS, BugClass, Incident
from incidents.services.recurrence import recurrence_check, recurrences_still_valid
from incidents.services.times import time_order_check
from incidents.vocabulary import incident_metrics_ensure
from metrics.models import System, Workload
from metrics.public import observations_ingest_rows, observations_withdraw

MSG_ROLE = "Only a framework engineer or a program lead may {action}."
MSG_TITLE = "Give the incident a title."
MSG_STEP = "done_steps names step {index}, but the runbook has {count} steps."
MSG_UNKNOWN = "{name} cannot be changed here."

EDITABLE = (
    "title",
    "system",
    "component",
    "workload",
    "bug_class",
    "severity",
    *TIME_FIELDS,
    "troubleshooting",
    "done_steps",
    "link",
    "owner_team",
    "recurrence_of",
)


class IncidentChanges(TypedDict, total=False):
    """What incident_update may change (EDITABLE); a key left out keeps its value."""

    title: str
    system: System
    component: Component
    workload: Workload | None
    bug_class: BugClass
    severity: str
    opened_at: datetime
    detected_at: datetime
    mitigated_at: datetime | None
    resolved_at: datetime | None
    troubleshooting: str
    done_steps: list[int]
    link: str
    owner_team: str
    recurrence_of: Incident | None


# Set as given; the times are checked and completed together (_times), done_steps becomes the checklist.
PLAIN_FIELDS = tuple(name for name in EDITABLE if name not in TIME_FIELDS and name != "done_steps")
# A change to any of these rewrites a resolved incident's mttr/mttd observations.
EVIDENCE_FIELDS = ("system", "workload", "bug_class", "severity", *TIME_FIELDS)


def incident_writer_check(*, actor: User, action: str = "file or update incidents") -> None:
    """Refuses (PermissionDenied) unless the actor is a framework engineer or a program lead."""
    if not (has_role(actor, FRAMEWORK_ENGINEERS) or has_role(actor, PROGRAM_LEADS)):
        raise PermissionDenied(MSG_ROLE.format(action=action))


def _checklist(
    bug_class: BugClass, done_steps: list[int] | None, old: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The class's runbook with done flags: from `done_steps` (indices) when given, else kept by step text."""
    steps = [str(step) for step in bug_class.runbook]
    if done_steps is not None:
        for index in done_steps:
            if not 0 <= index < len(steps):
                raise ApplicationError(
                    MSG_STEP.format(index=index, count=len(steps)), status=400, field="done_steps"
                )
        return [{"step": step, "done": i in set(done_steps)} for i, step in enumerate(steps)]
    done = {item["step"] for item in old or [] if item.get("done")}
    return [{"step": step, "done": step in done} for step in steps]


def _times(values: dict[str, Any]) -> dict[str, datetime | None]:
    """The four times, checked in the order they came (so a refusal names the field that was sent)."""
    times = {name: values.get(name) for name in TIME_FIELDS}
    time_order_check(times)
    if times["resolved_at"] and not times["mitigated_at"]:
        # A resolved incident's impact has stopped: no later than the fix.
        times["mitigated_at"] = times["resolved_at"]
    return times


def _write_evidence(incident: Incident, user: User, *, replace: bool) -> None:
    if replace:
        observations_withdraw(
            definition_ids=evidence.active_definition_ids((evidence.MTTR, evidence.MTTD)),
            run_id=evidence.run_id(incident.pk),
        )
    rows = evidence.speed_rows(incident)
    if rows:
        incident_metrics_ensure()
        observations_ingest_rows(rows=rows, actor=user, source=evidence.SOURCE)


def _link(incident: Incident) -> str:
    return reverse("incidents:detail", args=[incident.pk])


def incident_notify(incident: Incident, event: str, subject: str, actor: User) -> None:
    # No program_key: an incident belongs to a system and a component, which every program shares.
    users = get_user_model().objects.filter(groups__name=incident.owner_team).exclude(pk=actor.pk).distinct()
    notification_send(
        event=event,
        subject=subject,
        body=f"{incident.severity} on {incident.system.key} / {incident.component.key}: {incident.title}",
        link=_link(incident),
        payload={"incident": incident.pk, "state": incident.state},
        users=list(users.order_by("pk")),
    )


def incident_file(
    *,
    actor: User,
    title: str,
    system: System,
    component: Component,
    bug_class: BugClass,
    severity: str,
    opened_at: datetime,
    detected_at: datetime,
    workload: Workload | None = None,
    mitigated_at: datetime | None = None,
    resolved_at: datetime | None = None,
    troubleshooting: str = "",
    done_steps: list[int] | None = None,
    link: str = "",
    owner_team: str = "",
    recurrence_of: Incident | None = None,
    alert_fingerprint: str = "",
) -> Incident:
    """The actor (a framework engineer or program lead) files one incident and is its reporter; filed
    already resolved (a CSV of past incidents), it writes its evidence too. `recurrence_of` links an
    earlier incident of the same root cause (services.recurrence); `alert_fingerprint` the Alertmanager
    alert that opened it (services.alerts)."""
    incident_writer_check(actor=actor)
    if not title.strip():
        raise ApplicationError(MSG_TITLE, status=400, field="title")
    times = _times(
        {
            "opened_at": opened_at,
            "detected_at": detected_at,
            "mitigated_at": mitigated_at,
            "resolved_at": resolved_at,
        }
    )
    recurrence_check(incident=None, earlier=recurrence_of, bug_class=bug_class, opened_at=opened_at)
    with transaction.atomic():
        incident = Incident.objects.create(
            title=title.strip(),
            system=system,
            component=component,
            workload=workload,
            bug_class=bug_class,
            severity=severity,
            **times,
            troubleshooting=troubleshooting,
            checklist=_checklist(bug_class, done_steps),
            link=link,
            owner_team=owner_team or component.owner_team,
            reporter=actor,
            recurrence_of=recurrence_of,
            alert_fingerprint=alert_fingerprint,
        )
        transition_record(subject=incident, action="filed", actor=actor, to_state=incident.state)
        _write_evidence(incident, actor, replace=False)
        incident_notify(incident, "incident.filed", f"Incident #{incident.pk} filed: {incident.title}", actor)
    return incident


def incident_update(*, actor: User, incident: Incident, changes: IncidentChanges) -> Incident:
    """The actor (a framework engineer or program lead) changes some fields. Setting resolved_at
    resolves; changing a resolved incident's times, system, workload, class or severity withdraws its
    mttr/mttd observations and writes them again."""
    incident_writer_check(actor=actor)
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise ApplicationError(MSG_UNKNOWN.format(name=unknown[0]), status=400, field=unknown[0])
    if "title" in changes and not str(changes["title"]).strip():
        raise ApplicationError(MSG_TITLE, status=400, field="title")
    with transaction.atomic():
        incident = Incident.objects.select_for_update().select_related("bug_class").get(pk=incident.pk)
        before = {name: getattr(incident, name) for name in EDITABLE if name != "done_steps"}
        merged = {**{name: getattr(incident, name) for name in TIME_FIELDS}, **changes}
        times = _times(merged)
        was_resolved, old_state = incident.is_resolved, incident.state
        plain = {**changes, **({"title": changes["title"].strip()} if "title" in changes else {})}
        model_update(instance=incident, fields=PLAIN_FIELDS, data=plain, save=False)
        model_update(instance=incident, fields=TIME_FIELDS, data=times, save=False)
        if "bug_class" in changes or "done_steps" in changes:
            incident.checklist = _checklist(incident.bug_class, changes.get("done_steps"), incident.checklist)
        changed = sorted(name for name, value in before.items() if getattr(incident, name) != value)
        _recurrence_keeps(incident, changes, changed)
        evidence_changed = any(name in EVIDENCE_FIELDS for name in changed)
        if evidence_changed and (was_resolved or incident.is_resolved):
            incident.revision += 1
        incident.save()
        action = "resolved" if incident.is_resolved and not was_resolved else "updated"
        if was_resolved and not incident.is_resolved:
            action = "reopened"
        transition_record(
            subject=incident,
            action=action,
            actor=actor,
            from_state=old_state,
            to_state=incident.state,
            data={"changed": changed + (["checklist"] if "done_steps" in changes else [])},
        )
        if evidence_changed and (was_resolved or incident.is_resolved):
            _write_evidence(incident, actor, replace=was_resolved)
        # Whoever updates, resolves or reopens an incident has acted on the notices about it.
        notifications_mark_read_for(actor=actor, link=_link(incident))
        if action != "updated":
            incident_notify(
                incident, f"incident.{action}", f"Incident #{incident.pk} {action}: {incident.title}", actor
            )
    return incident


def _recurrence_keeps(incident: Incident, changes: IncidentChanges, changed: list[str]) -> None:
    """The link out (to an earlier incident) and the links in (recurrences of this one) still hold."""
    linked = {"recurrence_of", "opened_at", "bug_class"} & set(changed)
    if not linked:
        return
    field = next(name for name in ("recurrence_of", "opened_at", "bug_class") if name in linked)
    recurrence_check(
        incident=incident,
        earlier=incident.recurrence_of,
        bug_class=incident.bug_class,
        opened_at=incident.opened_at,
        field="recurrence_of" if "recurrence_of" in changes else field,
    )
    recurrences_still_valid(incident=incident, changed=changed)


def incident_resolve(
    *,
    actor: User,
    incident: Incident,
    resolved_at: datetime | None = None,
    mitigated_at: datetime | None = None,
) -> Incident:
    """Resolve at `resolved_at` (now if not given), mitigated at `mitigated_at` when given (else as
    before, or at the resolution): the update that sets them (same actor rule), so the times are
    checked like any edit's: not before the incident was opened and detected, not in the future."""
    changes: IncidentChanges = {"resolved_at": resolved_at or timezone.now()}
    if mitigated_at is not None:
        changes["mitigated_at"] = mitigated_at
    return incident_update(actor=actor, incident=incident, changes=changes)
