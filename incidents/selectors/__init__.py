"""Reads of the incidents app."""

from incidents.selectors.incidents import (
    MONTHLY_SQL,
    SPEED_SQL,
    IncidentFilter,
    Recurrence,
    Speed,
    bug_classes_list,
    incident_speed,
    incidents_list,
    mttr_by_month,
    recurrence_by_month,
)

__all__ = [
    "MONTHLY_SQL",
    "SPEED_SQL",
    "IncidentFilter",
    "Recurrence",
    "Speed",
    "bug_classes_list",
    "incident_speed",
    "incidents_list",
    "mttr_by_month",
    "recurrence_by_month",
]
