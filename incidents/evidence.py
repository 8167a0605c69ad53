"""Incidents as registry evidence: the metric keys they feed, and the observation rows of one incident.

A resolved incident is one `mttr` and one `mttd` observation (hours from opened_at), run_id
`incident-<id>`, observed at resolved_at, tagged with its bug class and severity. An incident without
a workload is filed under FLEET_WORKLOAD: an observation needs one, and a criterion over every workload
pools them all.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from incidents.models import Incident
from metrics.models import MetricDefinition, Workload

MTTR, MTTD = "mttr", "mttd"
INCIDENTS_PER_WEEK = "incidents-per-week"
EFFECTIVE_ROUNDS = "effective-rounds-per-day"
PROGRAM_ROUNDS = "program-rounds-per-day"
RECURRENCE_RATE = "recurrence-rate"
FLEET_WORKLOAD = "fleet"
SOURCE = "incidents"
HOUR = 3600.0


def run_id(incident_id: int) -> str:
    return f"incident-{incident_id}"


def active_definition_ids(keys: tuple[str, ...]) -> list[int]:
    return list(
        MetricDefinition.objects.filter(key__in=keys, status=MetricDefinition.Status.ACTIVE).values_list(
            "pk", flat=True
        )
    )


def hours_between(start: datetime, end: datetime) -> float:
    return (end - start).total_seconds() / HOUR


def speed_rows(incident: Incident) -> list[dict[str, Any]]:
    """The two rows of a resolved incident (none before it is resolved)."""
    if incident.resolved_at is None:
        return []
    common = {
        "system": incident.system.key,
        # A workload_id means the workload exists (and it is read only then).
        "workload": cast(Workload, incident.workload).key if incident.workload_id else FLEET_WORKLOAD,
        "observed_at": incident.resolved_at.isoformat(),
        "unit": "hour",
        "run_id": run_id(incident.pk),
        "source": SOURCE,
        "tags": {"bug_class": incident.bug_class.key, "severity": incident.severity},
    }
    return [
        {**common, "metric": MTTR, "value": hours_between(incident.opened_at, incident.resolved_at)},
        {**common, "metric": MTTD, "value": hours_between(incident.opened_at, incident.detected_at)},
    ]
