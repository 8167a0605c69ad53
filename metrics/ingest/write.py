"""Writing checked observation rows: the IngestBatch row, then binary COPY, references locked once per
distinct id, and the rollup deltas of the rows that were new (metrics.rollups.incremental).

Rows are copied straight into the table. When the primary key refuses the copy (a row repeats one
stored, or one a concurrent batch stored), its savepoint is undone and the batch goes through a
temporary table and one INSERT … ON CONFLICT DO NOTHING: the same value is a no-op, another value an
error for that row. Repeats within the batch were found by the check (check.check_rows).
"""

from __future__ import annotations

from datetime import UTC
from itertools import repeat
from typing import Any, NoReturn, cast

import psycopg
from django.contrib.auth.models import User
from django.db import connection, transaction

from core.errors import ApplicationError
from metrics.ingest.check import (
    DEFINITION,
    OBSERVED_AT,
    RUN_ID,
    SOURCE,
    SYSTEM,
    TAGS,
    UNIT,
    VALUE,
    WORKLOAD,
    ValidRows,
)
from metrics.ingest.formats.histograms import Histogram
from metrics.ingest.rules import JSONB_VERSION, MSG_INVALID
from metrics.models import IngestBatch, MetricDefinition
from metrics.rollups.incremental import deltas_ctes, rollup_deltas_add
from metrics.rollups.sketch import LOG_GAMMA
from metrics.units import unit_factor

COPY_TYPES = ["int4", "int8", "int8", "int8", "float8", "text", "timestamptz", "text", "text", "text"]
TEMP_TABLE = """
CREATE TEMP TABLE ingest_rows (
    idx int, definition_id bigint, system_id bigint, workload_id bigint, value float8, unit text,
    observed_at timestamptz, run_id text COLLATE "C", source text, tags jsonb
) ON COMMIT DROP
"""
# The rows new to the table, and the rollup deltas of exactly those (a repeat adds nothing), in one
# statement; how many were new.
MOVE_ROWS = f"""
WITH moved AS (
    INSERT INTO metrics_observation
        (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags, batch_id)
    SELECT definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags, %(batch)s
    FROM ingest_rows
    ON CONFLICT (definition_id, system_id, workload_id, run_id, observed_at) DO NOTHING
    RETURNING definition_id, system_id, workload_id, observed_at, value
), {deltas_ctes("moved")}
SELECT count(*) FROM moved
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


def _lock_references(raw: psycopg.Cursor[Any], valid: ValidRows) -> None:
    wanted = [valid.distinct(column) for column in (DEFINITION, SYSTEM, WORKLOAD)]
    raw.execute(LOCK_REFERENCES, wanted)
    # One row of three counts: a SELECT without FROM always returns exactly one.
    if list(cast("tuple[int, int, int]", raw.fetchone())) != [len(ids) for ids in wanted]:
        raise ApplicationError(MSG_REFERENCE_CHANGED, status=409)


DIRECT_COPY = (
    "COPY metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, "
    "tags, batch_id) FROM STDIN (FORMAT BINARY)"
)
DIRECT_TYPES = ["int8", "int8", "int8", "float8", "text", "timestamptz", "text", "text", "text", "int8"]


def _copy_direct(raw: psycopg.Cursor[Any], valid: ValidRows, batch_id: int) -> int:
    with raw.copy(DIRECT_COPY) as copy:
        copy.set_types(DIRECT_TYPES)
        for row in zip(*valid.columns, repeat(batch_id)):
            copy.write_row(row)
    # Every row was new (the copy is all or nothing): their rollup deltas, from the same columns.
    columns = (DEFINITION, SYSTEM, WORKLOAD, OBSERVED_AT, VALUE)
    rollup_deltas_add(raw, batch_id=batch_id, rows=zip(*(valid.columns[c] for c in columns), strict=True))
    return len(valid)


def batch_write(
    valid: ValidRows,
    *,
    received: int,
    submitted_by: User | None,
    source: str,
    histograms: dict[int, Histogram] | None = None,
) -> IngestBatch:
    """The batch row and its observations, in the caller's transaction; `inserted` counts the new ones.
    The rows whose request position is in `histograms` are written as histogram points instead."""
    batch = IngestBatch.objects.create(
        submitted_by=submitted_by if submitted_by and submitted_by.is_authenticated else None,
        source=source[:100],
        received=received,
        inserted=len(valid),  # corrected below when some rows were already stored
        definition_ids=valid.distinct(DEFINITION),
        workload_ids=valid.distinct(WORKLOAD),
        # The span the batch covers (its rollup deltas are written with the rows instead). In UTC:
        # PostgreSQL refuses offsets beyond ±15:59, which Python accepts.
        observed_from=min(valid.columns[OBSERVED_AT]).astimezone(UTC) if len(valid) else None,
        observed_to=max(valid.columns[OBSERVED_AT]).astimezone(UTC) if len(valid) else None,
    )
    if histograms:
        plain, buckets = _split(valid, histograms)
        inserted = (rows_write(plain, batch.pk) if len(plain) else 0) + histograms_write(
            buckets, histograms, batch.pk
        )
    else:
        inserted = rows_write(valid, batch.pk)
    if inserted != batch.inserted:
        IngestBatch.objects.filter(pk=batch.pk).update(inserted=inserted)
        batch.inserted = inserted
    return batch


def rows_write(valid: ValidRows, batch_id: int) -> int:
    """Write checked rows in the caller's transaction, references locked; how many were new."""
    with connection.cursor() as cursor:
        raw: psycopg.Cursor[Any] = cursor.cursor  # Django's wrapper types the driver's cursor as Any
        _lock_references(raw, valid)
        # No query first asks whether the batch's runs are stored: whatever its form, a planner misled
        # by a month's partition analysed when it held one run scanned it whole for every new run
        # (ingest at a tenth of its rate on the 1st). A repeated batch fails at its first row and
        # costs 3 % more than probing did (62 against 60 ms for 10,000 rows); a run that goes on
        # (a pull, a long job) is copied straight in instead of merged.
        try:
            with transaction.atomic():  # a savepoint: only the direct copy is undone on a collision
                return _copy_direct(raw, valid, batch_id)
        except (psycopg.errors.UniqueViolation, psycopg.errors.InternalError_) as exc:
            if not _is_duplicate_key(exc):
                raise
            # a row repeats a stored one, another of the batch, or one a concurrent batch stored
        return _merge(raw, valid, batch_id)


def _is_duplicate_key(exc: psycopg.Error) -> bool:
    """A unique violation; on Citus, a COPY into a distributed table reports a shard's as an internal
    error (SQLSTATE XX000, Citus 13.2) with PostgreSQL's message."""
    if isinstance(exc, psycopg.errors.UniqueViolation):
        return True
    return (exc.diag.message_primary or "").startswith("duplicate key value violates unique constraint")


def _merge(raw: psycopg.Cursor[Any], valid: ValidRows, batch_id: int) -> int:
    """Rows some of which are stored: the same value is a no-op, another value an error for that row."""
    raw.execute(TEMP_TABLE)
    with raw.copy("COPY ingest_rows FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(COPY_TYPES)
        for row in zip(valid.indexes, *valid.columns, strict=True):
            copy.write_row(row)
    raw.execute(MOVE_ROWS, {"batch": batch_id, "log_gamma": LOG_GAMMA})
    inserted = int(cast("tuple[int]", raw.fetchone())[0])
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


def _refuse(errors: list[dict[str, Any]], *, total: int) -> NoReturn:
    """The whole batch is refused: a 422 listing the rows found bad while writing."""
    raise ApplicationError(MSG_INVALID.format(count=len(errors), total=total), status=422, errors=errors)


# --- histogram points (OTLP) ----------------------------------------------------------------------------

HISTOGRAM_INSERT = """
INSERT INTO metrics_histogrampoint
    (definition_id, system_id, workload_id, run_id, observed_at, stream, count, sum, low, high, lows, highs,
     counts, unit, source, tags, batch_id)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s)
ON CONFLICT (definition_id, system_id, workload_id, run_id, observed_at, stream) DO NOTHING
"""
HISTOGRAM_STORED = """
SELECT count, sum FROM metrics_histogrampoint
WHERE definition_id = %s AND system_id = %s AND workload_id = %s AND run_id = %s AND observed_at = %s
  AND stream = %s
"""


def _split(valid: ValidRows, histograms: dict[int, Histogram]) -> tuple[ValidRows, ValidRows]:
    """(the observation rows, the histogram rows) of a checked batch."""

    def subset(positions: list[int]) -> ValidRows:
        columns = tuple([column[p] for p in positions] for column in valid.columns)
        return ValidRows(columns, [valid.indexes[p] for p in positions])

    positions = range(len(valid.indexes))
    return (
        subset([p for p in positions if valid.indexes[p] not in histograms]),
        subset([p for p in positions if valid.indexes[p] in histograms]),
    )


def histograms_write(valid: ValidRows, histograms: dict[int, Histogram], batch_id: int) -> int:
    """Histogram points in the definition's unit, references locked; how many were new. One already
    stored under the same natural key is a no-op with the same count and sum, else an error."""
    if not len(valid):
        return 0
    units = dict(MetricDefinition.objects.filter(pk__in=valid.distinct(DEFINITION)).values_list("pk", "unit"))
    inserted, errors = 0, []
    with connection.cursor() as cursor:
        _lock_references(cursor.cursor, valid)
        for index, row in zip(valid.indexes, zip(*valid.columns, strict=True), strict=True):
            histogram = histograms[index]
            factor = (
                unit_factor(row[UNIT], units[row[DEFINITION]]) if row[UNIT] != units[row[DEFINITION]] else 1.0
            )
            lows, highs, counts = histogram.ranges(factor)
            key = (
                row[DEFINITION],
                row[SYSTEM],
                row[WORKLOAD],
                row[RUN_ID],
                row[OBSERVED_AT],
                histogram.stream,
            )
            low, high = (None if x is None else x * factor for x in (histogram.min, histogram.max))
            tags = row[TAGS][len(JSONB_VERSION) :]  # jsonb's binary COPY text: its version byte first
            point = [histogram.count, histogram.sum * factor, low, high, lows, highs, counts]
            cursor.execute(HISTOGRAM_INSERT, [*key, *point, row[UNIT], row[SOURCE], tags, batch_id])
            if cursor.rowcount:
                inserted += 1
                continue
            cursor.execute(HISTOGRAM_STORED, list(key))
            count, total = cursor.fetchone()
            if (count, total) != (histogram.count, histogram.sum * factor):
                errors.append(
                    {
                        "index": index,
                        "field": "value",
                        "message": f"a histogram point of count {count} and sum {total} is already "
                        "recorded for the same stream, metric, system, workload, run_id and observed_at.",
                    }
                )
    if errors:
        _refuse(errors, total=len(valid))
    MetricDefinition.objects.filter(pk__in=valid.distinct(DEFINITION), has_histograms=False).update(
        has_histograms=True
    )
    return inserted
