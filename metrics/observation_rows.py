"""The observations list's page as plain rows: the columns it shows, names looked up once per page.

A page of model instances through ObservationOutput (a ModelSerializer) cost more than the page's
query: DRF builds and runs ten fields per row. The page is read with values() — only the columns the
answer shows, plus the cursor's — and the definition, system and workload names come from
metrics.reference_names (cached; else one small query each for the ids on the page), so a page runs
the same queries for any page size and any table size. `rows_as_json` writes what ObservationOutput
writes; tests hold the two equal, and ObservationOutput stays the schema.
"""

from __future__ import annotations

from typing import Any, cast

from django.db.models import QuerySet

from core.api.plain_json import iso
from metrics import reference_names
from metrics.models import Observation

COLUMNS = (
    "definition_id",
    "system_id",
    "workload_id",
    "value",
    "unit",
    "observed_at",
    "run_id",
    "source",
    "tags",
    "batch_id",
)


def page_rows(queryset: QuerySet[Observation]) -> QuerySet[Observation, dict[str, Any]]:
    """The list's queryset (filters and order kept) reading only the shown columns, as dicts."""
    # The plugin types values() only for literal field names, not for a starred tuple of them.
    return cast("QuerySet[Observation, dict[str, Any]]", queryset.prefetch_related(None).values(*COLUMNS))


def rows_as_json(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The page as ObservationOutput writes it; the names from metrics.reference_names (cached, else
    three queries whatever the page size)."""
    names = reference_names.names_for(
        {row["definition_id"] for row in rows},
        {row["system_id"] for row in rows},
        {row["workload_id"] for row in rows},
    )
    refs, systems, workloads = names.definitions, names.systems, names.workloads
    return [
        {
            "metric": refs[row["definition_id"]],
            "system": systems[row["system_id"]],
            "workload": workloads[row["workload_id"]],
            "value": float(row["value"]),
            "unit": row["unit"],
            "observed_at": iso(row["observed_at"]),
            "run_id": row["run_id"],
            "source": row["source"],
            "tags": row["tags"],
            "batch": row["batch_id"],
        }
        for row in rows
    ]
