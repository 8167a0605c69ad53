"""The observations list's page as plain rows: the columns it shows, names looked up once per page.

A page of model instances through ObservationOutput (a ModelSerializer) cost more than the page's
query: DRF builds and runs ten fields per row. The page is read with values() — only the columns the
answer shows, plus the cursor's — and the definition, system and workload names come from
metrics.reference_names (cached; else one small query each for the ids on the page), so a page runs
the same queries for any page size and any table size. `rows_as_json` writes what ObservationOutput
writes; tests hold the two equal, and ObservationOutput stays the schema.

`value` and `unit` are the stored value in its definition's unit; `arrival_value` and `arrival_unit`
are as sent (Observation.unit keeps the unit the value arrived in), the value converted back with
pint per row of the page: a multiplication by a cached factor, no query.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any, cast

from django.db import transaction
from django.db.models import QuerySet

from core.api.plain_json import iso
from metrics import reference_names
from metrics.models import Observation
from metrics.reference_names import Names
from metrics.units import value_in_unit

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


def rows_as_json(rows: list[dict[str, Any]], names: Names | None = None) -> list[dict[str, Any]]:
    """The page as ObservationOutput writes it; the names from metrics.reference_names (cached, else
    three queries whatever the page size), or `names` where they cover every row (an export's chunk)."""
    ids = (
        {row["definition_id"] for row in rows},
        {row["system_id"] for row in rows},
        {row["workload_id"] for row in rows},
    )
    if names is None or not names.cover(*ids):
        names = reference_names.names_for(*ids)
    refs, systems, workloads, units = names.definitions, names.systems, names.workloads, names.units
    answer = []
    for row in rows:
        unit = units[row["definition_id"]]
        value, arrival_unit = float(row["value"]), row["unit"] or unit
        answer.append(
            {
                "metric": refs[row["definition_id"]],
                "system": systems[row["system_id"]],
                "workload": workloads[row["workload_id"]],
                "value": value,
                "unit": unit,
                "arrival_value": value_in_unit(value, unit, arrival_unit),
                "arrival_unit": arrival_unit,
                "observed_at": iso(row["observed_at"]),
                "run_id": row["run_id"],
                "source": row["source"],
                "tags": row["tags"],
                "batch": row["batch_id"],
            }
        )
    return answer


def rows_streamed(queryset: QuerySet[Observation], *, chunk_size: int) -> Iterator[list[dict[str, Any]]]:
    """Every row of the list's queryset (filters and order kept), `chunk_size` at a time as
    `rows_as_json` writes them, read through one server-side cursor: memory holds one chunk, and the
    queries are the same for any number of rows (the names once, here; the cursor's DECLARE).

    The cursor is read inside a transaction: outside one Django declares it WITH HOLD, which PostgreSQL
    materializes in full at the commit that follows the DECLARE, before the first row is sent."""
    names = reference_names.names_all()

    def chunks() -> Iterator[list[dict[str, Any]]]:
        with transaction.atomic(using=queryset.db):
            rows = page_rows(queryset).iterator(chunk_size=chunk_size)
            while chunk := list(islice(rows, chunk_size)):
                yield rows_as_json(chunk, names)

    return chunks()
