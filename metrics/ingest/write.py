"""Writing checked observation rows: the IngestBatch row, then binary COPY, references locked once per
distinct id.

Rows of runs not stored yet are copied straight into the table. A batch touching a stored run goes
through a temporary table and one INSERT … ON CONFLICT DO NOTHING: the same value is a no-op, another
value an error for that row.
"""

from __future__ import annotations

from itertools import repeat
from typing import NoReturn

import psycopg
from django.db import connection, transaction

from core.errors import ApplicationError
from metrics.ingest.check import DEFINITION, RUN_ID, SYSTEM, WORKLOAD, ValidRows
from metrics.ingest.rules import MSG_INVALID, repeat_error
from metrics.models import IngestBatch

COPY_TYPES = ["int4", "int8", "int8", "int8", "float8", "text", "timestamptz", "text", "text", "text"]
TEMP_TABLE = """
CREATE TEMP TABLE ingest_rows (
    idx int, definition_id bigint, system_id bigint, workload_id bigint, value float8, unit text,
    observed_at timestamptz, run_id text COLLATE "C", source text, tags jsonb
) ON COMMIT DROP
"""
MOVE_ROWS = """
INSERT INTO metrics_observation
    (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags, batch_id)
SELECT definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags, %s
FROM ingest_rows
ON CONFLICT (definition_id, system_id, workload_id, run_id, observed_at) DO NOTHING
"""
# Rows repeating an earlier row's natural key with another value (same value: a no-op).
REPEATS = """
SELECT idx, first_idx, first_value FROM (
    SELECT idx, value,
           first_value(idx) OVER natural_key AS first_idx, first_value(value) OVER natural_key AS first_value
    FROM ingest_rows
    WINDOW natural_key AS (PARTITION BY definition_id, system_id, workload_id, run_id, observed_at ORDER BY idx)
) AS numbered
WHERE idx <> first_idx AND value <> first_value
ORDER BY idx
"""
CONFLICTS = """
SELECT t.idx, o.value FROM ingest_rows t
JOIN metrics_observation o USING (definition_id, system_id, workload_id, run_id, observed_at)
WHERE o.value <> t.value ORDER BY t.idx
"""


# The referenced rows, locked FOR KEY SHARE until commit: what per-row foreign keys would do, once
# per distinct id instead of once per row, in one round trip. A definition must not have been
# deprecated meanwhile (active or draft: check.Lookups).
LOCK_REFERENCES = """
SELECT
    (SELECT count(*) FROM (
        SELECT 1 FROM metrics_metricdefinition WHERE id = ANY(%s) AND status <> 'deprecated' FOR KEY SHARE
    ) AS definitions),
    (SELECT count(*) FROM (SELECT 1 FROM metrics_system WHERE id = ANY(%s) FOR KEY SHARE) AS systems),
    (SELECT count(*) FROM (SELECT 1 FROM metrics_workload WHERE id = ANY(%s) FOR KEY SHARE) AS workloads)
"""
MSG_REFERENCE_CHANGED = (
    "A metric, system or workload of this batch changed while it was written; send it again."
)


def _lock_references(raw, valid: ValidRows) -> None:
    wanted = [valid.distinct(column) for column in (DEFINITION, SYSTEM, WORKLOAD)]
    raw.execute(LOCK_REFERENCES, wanted)
    if list(raw.fetchone()) != [len(ids) for ids in wanted]:
        raise ApplicationError(MSG_REFERENCE_CHANGED, status=409)


# Does any row of the batch belong to a run already stored? The natural key includes run_id, so when
# none does, no row can collide and the batch is copied straight into the table. The LATERAL … LIMIT 1
# keeps this a few primary-key probes whatever the planner estimates (a semi join chose a full scan).
RUNS_EXIST = """
SELECT 1 FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::text[]) AS run(d, s, w, run_id)
CROSS JOIN LATERAL (
    SELECT 1 FROM metrics_observation o
    WHERE o.definition_id = run.d AND o.system_id = run.s AND o.workload_id = run.w
      AND o.run_id = run.run_id COLLATE "C"
    LIMIT 1
) AS stored
LIMIT 1
"""
DIRECT_COPY = (
    "COPY metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, "
    "tags, batch_id) FROM STDIN (FORMAT BINARY)"
)
DIRECT_TYPES = ["int8", "int8", "int8", "float8", "text", "timestamptz", "text", "text", "text", "int8"]


def _runs_exist(raw, valid: ValidRows) -> bool:
    runs = valid.distinct(DEFINITION, SYSTEM, WORKLOAD, RUN_ID)
    raw.execute(RUNS_EXIST, [list(column) for column in zip(*runs, strict=True)])
    return raw.fetchone() is not None


def _copy_direct(raw, valid: ValidRows, batch_id: int) -> int:
    with raw.copy(DIRECT_COPY) as copy:
        copy.set_types(DIRECT_TYPES)
        for row in zip(*valid.columns, repeat(batch_id)):
            copy.write_row(row)
    return len(valid)


def batch_write(valid: ValidRows, *, received: int, submitted_by, source: str) -> IngestBatch:
    """The batch row and its observations, in the caller's transaction; `inserted` counts the new ones."""
    batch = IngestBatch.objects.create(
        submitted_by=submitted_by if submitted_by and submitted_by.is_authenticated else None,
        source=source[:100],
        received=received,
        inserted=len(valid),  # corrected below when some rows were already stored
        definition_ids=valid.distinct(DEFINITION),
        workload_ids=valid.distinct(WORKLOAD),
    )
    inserted = rows_write(valid, batch.pk)
    if inserted != batch.inserted:
        IngestBatch.objects.filter(pk=batch.pk).update(inserted=inserted)
        batch.inserted = inserted
    return batch


def rows_write(valid: ValidRows, batch_id: int) -> int:
    """Write checked rows in the caller's transaction, references locked; how many were new."""
    with connection.cursor() as cursor:
        raw = cursor.cursor
        _lock_references(raw, valid)
        if not _runs_exist(raw, valid):
            try:
                with transaction.atomic():  # a savepoint: only the direct copy is undone on a collision
                    return _copy_direct(raw, valid, batch_id)
            except psycopg.errors.UniqueViolation:
                pass  # a row repeated in the batch, or a concurrent batch stored the run first: merge
        return _merge(raw, valid, batch_id)


def _merge(raw, valid: ValidRows, batch_id: int) -> int:
    """Rows of runs already stored: same value is a no-op, another value an error for that row."""
    raw.execute(TEMP_TABLE)
    with raw.copy("COPY ingest_rows FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(COPY_TYPES)
        for row in zip(valid.indexes, *valid.columns, strict=True):
            copy.write_row(row)
    if not valid.repeats_checked:
        raw.execute(REPEATS)
        repeats = raw.fetchall()
        if repeats:
            _refuse([repeat_error(*repeat_row) for repeat_row in repeats], total=len(valid))
    raw.execute(MOVE_ROWS, (batch_id,))
    inserted = raw.rowcount
    if inserted < len(valid):
        raw.execute(CONFLICTS)
        conflicts = raw.fetchall()
        if conflicts:
            _refuse(
                [
                    {
                        "index": index,
                        "field": "value",
                        "message": f"already recorded with value {stored} for the same metric, system, "
                        "workload, run_id and observed_at.",
                    }
                    for index, stored in conflicts
                ],
                total=len(valid),
            )
    raw.execute("DROP TABLE ingest_rows")
    return inserted


def _refuse(errors: list[dict], *, total: int) -> NoReturn:
    """The whole batch is refused: a 422 listing the rows found bad while writing."""
    raise ApplicationError(MSG_INVALID.format(count=len(errors), total=total), status=422, errors=errors)
