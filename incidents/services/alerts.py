"""Alertmanager → incidents: what one webhook notification does, and the routes that say where an
alert goes (create / update / delete, for the page, the admin and the API alike).

A firing alert opens an incident, detected at its startsAt (when the alert began firing, after its rule's
`for:`), or attaches to the open (unresolved) incident of the same fingerprint. It is opened at its
`failure_began_at` annotation when the rule sets one no later than startsAt, else at startsAt too: MTTD
then counts from the firing (0) until a person sets when the failure began. A resolved alert marks that incident mitigated at its
endsAt; resolving stays a person's act (incident_resolve). Everything goes through incident_file and
incident_update, so the time-order rules, the audit rows and the notices hold as for hand-filed
incidents. Alertmanager sends the same alerts again (each group_interval while the group changes,
each repeat_interval while it fires, and retries on a 5xx answer), so a notification that changes
nothing writes nothing. Each alert is its own outcome in its own transaction: Alertmanager drops a
notification answered 4xx, so one unusable alert must not lose the others (a resolved alert is sent
once). An unusable alert is answered "refused" with its field and reason, and logged.

An alert no route matches opens no incident: an incident needs a system, component and bug class,
and inventing them would put it into the wrong system's MTTD/MTTR. It is kept as an UnroutedAlert
(shown on the routes page) instead; the pager is Alertmanager's job, not ours. Once a route exists,
Alertmanager's next repeat of the still-firing alert opens the incident with its original startsAt.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.db.models import Max

from core.audit import transition_record, transitions_for
from core.errors import ApplicationError
from core.services.model_update import model_update
from freeze.models import Component
from incidents.models import AlertRoute, BugClass, Incident, Severity, UnroutedAlert
from incidents.services.filing import incident_file, incident_notify, incident_update, incident_writer_check
from metrics.models import System, Workload

FIRING, RESOLVED = "firing", "resolved"
MSG_MATCHER = "Matcher label {name!r} is not a label name (any text but empty, without NUL characters)."
MSG_MATCHERS = 'Matchers are an object of label → value, e.g. {"alertname": "NcclAllReduceHang"}.'
MSG_MATCHER_VALUE = "Matcher {name!r} needs a text value."
MSG_POSITION = "position must be 0 or more."
MSG_ROUTE_FIELD = "{name} cannot be changed here."
ROUTE_ACTION = "manage alert routes"
RECEIVE_ACTION = "open incidents from alerts"
FAILURE_BEGAN_AT = "failure_began_at"
TITLE_MAX = 200
LINK_MAX = 500

logger = logging.getLogger(__name__)


def label_name_ok(name: str) -> bool:
    """Prometheus 3 and Alertmanager 0.27+ take any UTF-8 label name (`k8s.namespace`), and labels are
    only compared as text here; PostgreSQL's jsonb cannot hold NUL, and an empty name means nothing."""
    return bool(name) and "\x00" not in name


@dataclass(frozen=True)
class Alert:
    """One alert of a notification (Alertmanager's webhook payload, version 4)."""

    status: str
    fingerprint: str
    starts_at: datetime
    ends_at: datetime | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    generator_url: str = ""


@dataclass(frozen=True)
class RefusedAlert:
    """An alert of a notification that cannot be used as sent (say its startsAt is not a time)."""

    fingerprint: str
    field: str  # the payload's own name below the alert, e.g. "startsAt"
    reason: str


@dataclass(frozen=True)
class AlertOutcome:
    """What one alert did: opened, attached, refired, mitigated, replayed, unrouted, ignored or refused
    (then `field`, e.g. alerts.1.startsAt, and `reason` say why)."""

    fingerprint: str
    outcome: str
    incident: int | None = None
    field: str = ""
    reason: str = ""


def _alertname(alert: Alert) -> str:
    return alert.labels.get("alertname", "")


def route_for(labels: dict[str, str], routes: list[AlertRoute]) -> AlertRoute | None:
    """The first route (routes in position order) whose matchers all equal the alert's labels."""
    for route in routes:
        if all(labels.get(name) == value for name, value in route.matchers.items()):
            return route
    return None


def _link(alert: Alert) -> str:
    """The alert's generatorURL as the incident's link, when the incident's form would take it (a host
    with a dot, or localhost; at most 500 characters), so an edit of the incident is not refused for
    it. Otherwise it goes into the troubleshooting notes (_notes)."""
    if len(alert.generator_url) > LINK_MAX:
        return ""
    try:
        URLValidator()(alert.generator_url)
    except ValidationError:
        return ""
    return alert.generator_url


def _notes(alert: Alert, link: str) -> str:
    notes = alert.annotations.get("description", "")
    if alert.generator_url and not link:
        notes = f"{notes}\n\nAlert source: {alert.generator_url}".strip()
    return notes


def _opened_at(alert: Alert) -> datetime:
    """When the failure began: the rule's `failure_began_at` annotation (RFC 3339) if it is no later than
    startsAt, else startsAt (when the alert began firing). An unusable annotation is logged, not refused:
    the incident is still worth opening."""
    text = alert.annotations.get(FAILURE_BEGAN_AT, "")
    if not text:
        return alert.starts_at
    try:
        began = datetime.fromisoformat(text)
    except ValueError:
        began = None
    if began is None or began.tzinfo is None or began > alert.starts_at:
        logger.warning(
            "alert %s: annotation %s=%r is not an RFC 3339 time at or before startsAt; opened at startsAt",
            alert.fingerprint,
            FAILURE_BEGAN_AT,
            text,
        )
        return alert.starts_at
    return began


def _record(
    incident: Incident, action: str, actor: User, alert: Alert, receiver: str, from_state: str = ""
) -> None:
    """The alert's own audit row beside the filing or update row: which alert, from which receiver."""
    transition_record(
        subject=incident,
        action=action,
        actor=actor,
        from_state=from_state,
        to_state=incident.state if from_state else "",
        data={
            "fingerprint": alert.fingerprint,
            "alertname": _alertname(alert),
            "receiver": receiver,
            "startsAt": alert.starts_at.isoformat(),
            "endsAt": alert.ends_at.isoformat() if alert.ends_at else None,
        },
    )


def _open_incident(fingerprint: str) -> Incident | None:
    """The unresolved incident of this fingerprint, locked (incident_one_open_per_alert serves it)."""
    return (
        Incident.objects.select_for_update()
        .filter(alert_fingerprint=fingerprint, resolved_at__isnull=True)
        .first()
    )


def _unrouted(alert: Alert, now: datetime) -> None:
    row, created = UnroutedAlert.objects.select_for_update().get_or_create(
        fingerprint=alert.fingerprint,
        defaults={
            "alertname": _alertname(alert)[:TITLE_MAX],
            "labels": alert.labels,
            "starts_at": alert.starts_at,
            "last_seen_at": now,
        },
    )
    if not created:
        row.labels, row.starts_at, row.last_seen_at = alert.labels, alert.starts_at, now
        row.times_seen += 1
        row.save(update_fields=["labels", "starts_at", "last_seen_at", "times_seen"])


def _firing(
    *, actor: User, alert: Alert, receiver: str, routes: list[AlertRoute], now: datetime, retry: bool = True
) -> AlertOutcome:
    fingerprint = alert.fingerprint
    incident = _open_incident(fingerprint)
    if incident is not None:
        if incident.mitigated_at is not None and alert.starts_at > incident.mitigated_at:
            # It fired again after it stopped, before anyone resolved it: the same incident, impact back.
            incident = incident_update(actor=actor, incident=incident, changes={"mitigated_at": None})
            _record(incident, "alert-refired", actor, alert, receiver, from_state="mitigated")
            incident_notify(
                incident, "incident.refired", f"Incident #{incident.pk}: its alert fired again", actor
            )
            return AlertOutcome(fingerprint, "refired", incident.pk)
        return AlertOutcome(fingerprint, "attached", incident.pk)
    # This very alert (same start) opened an incident someone has resolved since: a late repeat.
    done = Incident.objects.filter(alert_fingerprint=fingerprint, detected_at=alert.starts_at).first()
    if done is not None:
        return AlertOutcome(fingerprint, "replayed", done.pk)
    route = route_for(alert.labels, routes)
    if route is None:
        _unrouted(alert, now)
        return AlertOutcome(fingerprint, "unrouted")
    severity = alert.labels.get("severity", "")
    link = _link(alert)
    title = alert.annotations.get("summary") or _alertname(alert) or f"Alert {fingerprint}"
    try:
        # A savepoint: a concurrent delivery of the same alert may have opened it a moment ago.
        with transaction.atomic():
            incident = incident_file(
                actor=actor,
                title=title[:TITLE_MAX],
                system=route.system,
                component=route.component,
                workload=route.workload,
                bug_class=route.bug_class,
                severity=severity if severity in Severity.values else route.severity,
                opened_at=_opened_at(alert),
                detected_at=alert.starts_at,
                troubleshooting=_notes(alert, link),
                link=link,
                alert_fingerprint=fingerprint,
            )
    except IntegrityError:
        if not retry:
            raise
        # The other delivery's incident is committed (or its lock released) by now: attach to it.
        return _firing(actor=actor, alert=alert, receiver=receiver, routes=routes, now=now, retry=False)
    _record(incident, "alert-opened", actor, alert, receiver)
    UnroutedAlert.objects.filter(fingerprint=fingerprint).delete()
    return AlertOutcome(fingerprint, "opened", incident.pk)


def _last_refired(incident: Incident) -> datetime:
    """The start of the alert's latest firing again (its detected_at if it never fired again)."""
    starts = [
        datetime.fromisoformat(data["startsAt"])
        for data in transitions_for(incident).filter(action="alert-refired").values_list("data", flat=True)
    ]
    return max([incident.detected_at, *starts])


def _resolved(*, actor: User, alert: Alert, receiver: str) -> AlertOutcome:
    fingerprint = alert.fingerprint
    UnroutedAlert.objects.filter(fingerprint=fingerprint).delete()
    incident = _open_incident(fingerprint)
    if incident is None:
        return AlertOutcome(fingerprint, "ignored")  # never routed, or resolved by a person already
    if incident.mitigated_at is not None or alert.starts_at < _last_refired(incident):
        # Mitigated already, or the end of an earlier firing arriving after the alert fired again.
        return AlertOutcome(fingerprint, "replayed", incident.pk)
    incident = incident_update(
        actor=actor, incident=incident, changes={"mitigated_at": alert.ends_at or alert.starts_at}
    )
    _record(incident, "alert-resolved", actor, alert, receiver, from_state="open")
    incident_notify(
        incident,
        "incident.mitigated",
        f"Incident #{incident.pk} mitigated: its alert resolved; resolve it once the fix lands",
        actor,
    )
    return AlertOutcome(fingerprint, "mitigated", incident.pk)


def alert_receive(
    *, actor: User, receiver: str, alerts: list[Alert | RefusedAlert], now: datetime
) -> list[AlertOutcome]:
    """One Alertmanager notification, one outcome per alert, each alert in its own transaction.

    Alertmanager retries a 5xx answer but drops a notification answered 4xx, with every alert in it, and
    a resolved alert is sent once: so an alert that cannot be used (a startsAt in the future, say) is
    answered "refused" with its field (`alerts.<i>.<field>`) and reason, logged, and writes nothing,
    while the others of the notification are written as usual."""
    incident_writer_check(actor=actor, action=RECEIVE_ACTION)
    routes = list(AlertRoute.objects.select_related("system", "component", "workload", "bug_class"))
    outcomes = []
    for index, alert in enumerate(alerts):
        if isinstance(alert, RefusedAlert):
            outcomes.append(_refused(receiver, index, alert.fingerprint, alert.field, alert.reason))
            continue
        try:
            with transaction.atomic():
                if alert.status == FIRING:
                    outcome = _firing(actor=actor, alert=alert, receiver=receiver, routes=routes, now=now)
                else:
                    outcome = _resolved(actor=actor, alert=alert, receiver=receiver)
        except ApplicationError as refusal:
            name = refusal.errors[0].get("field") if refusal.errors else None
            outcome = _refused(receiver, index, alert.fingerprint, _payload_field(name), refusal.message)
        outcomes.append(outcome)
    return outcomes


def _refused(receiver: str, index: int, fingerprint: str, name: str, reason: str) -> AlertOutcome:
    field_name = f"alerts.{index}.{name}" if name else f"alerts.{index}"
    logger.warning(
        "alert refused (receiver %s, %s, fingerprint %r): %s", receiver, field_name, fingerprint, reason
    )
    return AlertOutcome(fingerprint, "refused", field=field_name, reason=reason)


def _payload_field(name: str | None) -> str:
    """The payload's name for an incident field a refusal names (its times come from startsAt/endsAt)."""
    if name in ("opened_at", "detected_at"):
        return "startsAt"
    if name == "mitigated_at":
        return "endsAt"
    return name or ""


class RouteChanges(TypedDict, total=False):
    """What a route is made of; alert_route_update changes the keys given."""

    position: int
    matchers: dict[str, str]
    system: System
    component: Component
    workload: Workload | None
    bug_class: BugClass
    severity: str


ROUTE_FIELDS = ("position", "matchers", "system", "component", "workload", "bug_class", "severity")


def _matchers_check(matchers: object) -> dict[str, str]:
    if not isinstance(matchers, dict):  # the admin's JSON box takes any JSON
        raise ApplicationError(MSG_MATCHERS, status=400, field="matchers")
    for name, value in matchers.items():
        if not label_name_ok(str(name)):
            raise ApplicationError(MSG_MATCHER.format(name=name), status=400, field="matchers")
        if not isinstance(value, str):
            raise ApplicationError(MSG_MATCHER_VALUE.format(name=name), status=400, field="matchers")
    return dict(sorted(matchers.items()))


def _route_check(changes: RouteChanges) -> None:
    unknown = sorted(set(changes) - set(ROUTE_FIELDS))
    if unknown:
        raise ApplicationError(MSG_ROUTE_FIELD.format(name=unknown[0]), status=400, field=unknown[0])
    if "position" in changes and changes["position"] < 0:
        raise ApplicationError(MSG_POSITION, status=400, field="position")
    if "matchers" in changes:
        changes["matchers"] = _matchers_check(changes["matchers"])
    if "severity" in changes and changes["severity"] not in Severity.values:
        raise ApplicationError("Choose a severity of sev1–sev4.", status=400, field="severity")


def _route_data(route: AlertRoute) -> dict[str, Any]:
    return {
        "position": route.position,
        "matchers": route.matchers,
        "system": route.system.key,
        "component": route.component.key,
        "workload": route.workload.key if route.workload else None,
        "bug_class": route.bug_class.key,
        "severity": route.severity,
    }


def alert_route_create(
    *,
    actor: User,
    system: System,
    component: Component,
    bug_class: BugClass,
    matchers: dict[str, str],
    workload: Workload | None = None,
    severity: str = Severity.SEV3,
    position: int | None = None,
) -> AlertRoute:
    """A new route, tried after every existing one unless `position` says otherwise."""
    incident_writer_check(actor=actor, action=ROUTE_ACTION)
    values: RouteChanges = {
        "matchers": matchers,
        "system": system,
        "component": component,
        "workload": workload,
        "bug_class": bug_class,
        "severity": severity,
    }
    if position is not None:
        values["position"] = position
    _route_check(values)
    with transaction.atomic():
        if position is None:
            last = AlertRoute.objects.aggregate(last=Max("position"))["last"]
            values["position"] = 0 if last is None else last + 10
        route = AlertRoute.objects.create(**values)
        transition_record(subject=route, action="created", actor=actor, data=_route_data(route))
    return route


def alert_route_update(*, actor: User, route: AlertRoute, changes: RouteChanges) -> AlertRoute:
    incident_writer_check(actor=actor, action=ROUTE_ACTION)
    _route_check(changes)
    with transaction.atomic():
        route = AlertRoute.objects.select_for_update().get(pk=route.pk)
        before = _route_data(route)
        model_update(instance=route, fields=ROUTE_FIELDS, data=dict(changes), save=True)
        after = _route_data(route)
        changed = sorted(name for name in after if after[name] != before[name])
        transition_record(subject=route, action="updated", actor=actor, data={"changed": changed, **after})
    return route


def alert_route_delete(*, actor: User, route: AlertRoute) -> None:
    incident_writer_check(actor=actor, action=ROUTE_ACTION)
    with transaction.atomic():
        # Only the route's own row is locked: its workload is an outer join (it may have none).
        route = (
            AlertRoute.objects.select_for_update(of=("self",))
            .select_related("system", "component", "workload", "bug_class")
            .get(pk=route.pk)
        )
        transition_record(subject=route, action="deleted", actor=actor, data=_route_data(route))
        route.delete()
