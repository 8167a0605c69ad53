"""Reads of the incident log: the filtered list, and time to detect / resolve per bug class × system."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from incidents.models import BugClass, Incident


@dataclass(frozen=True)
class IncidentFilter:
    system: str = ""
    bug_class: str = ""
    severity: str = ""
    since: datetime | None = None
    until: datetime | None = None
    state: str = ""  # "open" (not resolved) or "resolved"


def incidents_list(filters: IncidentFilter | None = None) -> QuerySet[Incident]:
    """Newest first, with everything a row shows joined in (one query per page)."""
    f = filters or IncidentFilter()
    queryset = Incident.objects.select_related("system", "component", "workload", "bug_class", "reporter")
    if f.system:
        queryset = queryset.filter(system__key=f.system)
    if f.bug_class:
        queryset = queryset.filter(bug_class__key=f.bug_class)
    if f.severity:
        queryset = queryset.filter(severity=f.severity)
    if f.since:
        queryset = queryset.filter(opened_at__gte=f.since)
    if f.until:
        queryset = queryset.filter(opened_at__lt=f.until)
    if f.state == "open":
        queryset = queryset.filter(resolved_at__isnull=True)
    elif f.state == "resolved":
        queryset = queryset.filter(resolved_at__isnull=False)
    return queryset


def bug_classes_list() -> QuerySet[BugClass]:
    return BugClass.objects.all()


@dataclass(frozen=True)
class Speed:
    bug_class: str
    bug_class_name: str
    system: str
    count: int
    resolved: int
    mttd_hours: float | None
    mttr_hours: float | None
    mttr_p50_hours: float | None


# One pass over the window: averages and the median in SQL. MTTD counts every incident (each has a
# detected_at); MTTR only the resolved ones.
SPEED_SQL = """
SELECT b.key, b.name, s.key, count(*), count(i.resolved_at),
       avg(extract(epoch FROM i.detected_at - i.opened_at)) / 3600.0,
       avg(extract(epoch FROM i.resolved_at - i.opened_at)) / 3600.0,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM i.resolved_at - i.opened_at)) / 3600.0
FROM incidents_incident i
JOIN incidents_bugclass b ON b.id = i.bug_class_id
JOIN metrics_system s ON s.id = i.system_id
WHERE {where}
GROUP BY b.key, b.name, s.key
ORDER BY b.name, s.key
"""


def _where(f: IncidentFilter) -> tuple[str, list[Any]]:
    """The filter as SQL conditions on i (incident), b (bug class) and s (system), with parameters."""
    where, params = ["TRUE"], []
    for clause, value in (
        ("s.key = %s", f.system),
        ("b.key = %s", f.bug_class),
        ("i.severity = %s", f.severity),
        ("i.opened_at >= %s", f.since),
        ("i.opened_at < %s", f.until),
    ):
        if value:
            where.append(clause)
            params.append(value)
    return " AND ".join(where), params


def incident_speed(filters: IncidentFilter | None = None) -> list[Speed]:
    """MTTD / MTTR in hours per bug class × system, over incidents opened in the window."""
    where, params = _where(filters or IncidentFilter())
    with connection.cursor() as cursor:
        cursor.execute(SPEED_SQL.format(where=where), params)
        return [Speed(*row) for row in cursor.fetchall()]


MONTHLY_SQL = """
SELECT s.key, date_trunc('month', i.resolved_at AT TIME ZONE 'UTC') AS month,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM i.resolved_at - i.opened_at)) / 3600.0
FROM incidents_incident i JOIN metrics_system s ON s.id = i.system_id
WHERE i.resolved_at IS NOT NULL AND s.key = ANY(%s)
GROUP BY s.key, month ORDER BY month
"""


def mttr_by_month(systems: list[str]) -> dict[str, list[tuple[datetime, float]]]:
    """Median hours to resolve per system and calendar month (UTC) of resolution: the trend line."""
    series: dict[str, list[tuple[datetime, float]]] = {key: [] for key in systems}
    with connection.cursor() as cursor:
        cursor.execute(MONTHLY_SQL, [systems])
        for system, month, hours in cursor.fetchall():
            series[system].append((month.replace(tzinfo=UTC), hours))
    return series


@dataclass(frozen=True)
class Recurrence:
    """One bug class on one system in one calendar month (UTC, by opened_at)."""

    bug_class: str
    bug_class_name: str
    system: str
    month: datetime
    count: int  # incidents of the class opened that month
    recurrences: int  # of them, those linked to an earlier incident of the same root cause

    @property
    def rate(self) -> float:
        return self.recurrences / self.count


RECURRENCE_SQL = """
SELECT b.key, b.name, s.key, date_trunc('month', i.opened_at AT TIME ZONE 'UTC') AS month,
       count(*), count(i.recurrence_of_id)
FROM incidents_incident i
JOIN incidents_bugclass b ON b.id = i.bug_class_id
JOIN metrics_system s ON s.id = i.system_id
WHERE {where}
GROUP BY b.key, b.name, s.key, month
ORDER BY month DESC, b.name, s.key
"""


def recurrence_by_month(filters: IncidentFilter | None = None) -> list[Recurrence]:
    """The recurrence rate ("the same pitfall again") per bug class × system × month, newest month
    first: the share of the month's incidents of a class that recur an earlier incident."""
    where, params = _where(filters or IncidentFilter())
    with connection.cursor() as cursor:
        cursor.execute(RECURRENCE_SQL.format(where=where), params)
        return [
            Recurrence(key, name, system, month.replace(tzinfo=UTC), count, recurring)
            for key, name, system, month, count, recurring in cursor.fetchall()
        ]
