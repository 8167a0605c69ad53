"""Observation ingest: validate every row without ORM objects, then COPY into PostgreSQL.

A batch is all-or-nothing: any bad row → ApplicationError(422) listing every bad row, nothing written.
Speed matters (benchmarks/ingest.py): rows are checked with plain dict/float work against cached
lookups, copied in binary into a temporary table, and moved with one INSERT … ON CONFLICT DO NOTHING.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import orjson
import psycopg
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from core.errors import ApplicationError
from core.models import IdempotencyRecord
from metrics.models import IngestBatch, MetricDefinition, System, Workload
from metrics.units import UnitError, unit_factor

MAX_ROWS = 50_000
# jsonb's binary wire format is a version byte (1) and the JSON text. Tags are encoded once here and
# copied as raw bytes (declared bytea below), instead of through psycopg's per-row JSON dumper.
JSONB_VERSION = b"\x01"
EMPTY_TAGS = JSONB_VERSION + b"{}"
CLOCK_SKEW = timedelta(minutes=5)
IDEMPOTENCY_SCOPE = "observations.batch"

MSG_TOO_MANY = f"A batch holds at most {MAX_ROWS:,} observations; split it into smaller batches."
MSG_INVALID = "{count} of {total} observations are invalid; nothing was written."
MSG_KEY_REUSED = "This Idempotency-Key was used for a different request body; use a new key."


@dataclass
class IngestResult:
    batch_id: int
    received: int
    inserted: int
    definitions: list[str] = field(default_factory=list)
    replayed: bool = False

    @property
    def duplicates(self) -> int:
        return self.received - self.inserted

    def as_dict(self) -> dict[str, Any]:
        return {
            "batch": self.batch_id,
            "received": self.received,
            "inserted": self.inserted,
            "duplicates": self.duplicates,
            "definitions": self.definitions,
        }


class _Lookups:
    """Per-batch caches of reference data, so a 10,000-row batch does a handful of queries."""

    def __init__(self) -> None:
        self.systems = dict(System.objects.values_list("key", "id"))
        self.workloads = dict(Workload.objects.values_list("key", "id"))
        self.definitions: dict[str, MetricDefinition | str] = {}
        self._versions: dict[str, list[MetricDefinition]] | None = None

    def refs(self, ids: set[int]) -> list[str]:
        """Sorted key@N of the resolved definitions with these ids."""
        found = {d.pk: d for d in self.definitions.values() if isinstance(d, MetricDefinition)}
        return sorted(found[pk].ref for pk in ids)

    def definition(self, ref: Any) -> MetricDefinition | str:
        """The definition `ref` names, or an error message."""
        cached = self.definitions.get(ref) if isinstance(ref, str) else None
        if cached is not None:
            return cached
        result = self._resolve(ref)
        if isinstance(ref, str):
            self.definitions[ref] = result
        return result

    def _resolve(self, ref: Any) -> MetricDefinition | str:
        if not isinstance(ref, str) or not ref:
            return "metric is required: 'key' (its active version) or 'key@N'."
        if self._versions is None:
            self._versions = {}
            for definition in MetricDefinition.objects.all():
                self._versions.setdefault(definition.key, []).append(definition)
        key, _, version = ref.partition("@")
        versions = self._versions.get(key)
        if not versions:
            return f"unknown metric '{key}'."
        if not version:
            active = [d for d in versions if d.status == MetricDefinition.Status.ACTIVE]
            return active[0] if active else f"metric '{key}' has no active version."
        chosen = next((d for d in versions if str(d.version) == version), None)
        if chosen is None:
            return f"unknown version '{ref}'."
        if chosen.status != MetricDefinition.Status.ACTIVE:
            return f"{ref} is {chosen.status}; observations go to the active version only."
        return chosen


def _parse_value(raw: Any) -> float | str:
    if isinstance(raw, bool) or raw is None:
        return "value must be a number."
    if isinstance(raw, int | float):
        number = float(raw)
    elif isinstance(raw, str):
        try:
            number = float(raw)
        except ValueError:
            return f"value '{raw[:40]}' is not a number."
    else:
        return "value must be a number."
    if not math.isfinite(number):
        return "value must be finite (not NaN or infinite)."
    return number


def _parse_time(raw: Any, latest: datetime) -> datetime | str:
    if not isinstance(raw, str):
        return "observed_at must be an ISO 8601 timestamp with a timezone."
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        return f"observed_at '{raw[:40]}' is not an ISO 8601 timestamp."
    if moment.tzinfo is None:
        return "observed_at needs a timezone (e.g. '…Z' or '+00:00')."
    if moment > latest:
        return "observed_at is more than 5 minutes in the future."
    return moment


def _validate(rows: list[Any], lookups: _Lookups) -> tuple[list[tuple], list[dict[str, Any]], set[int]]:
    """(rows ready for COPY, errors, definition ids touched)."""
    latest = timezone.now() + CLOCK_SKEW
    errors: list[dict[str, Any]] = []
    out: list[tuple] = []
    seen: dict[tuple, tuple[float, int]] = {}
    touched: set[int] = set()
    systems, workloads = lookups.systems, lookups.workloads
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            errors.append({"index": index, "field": None, "message": "each observation must be an object."})
            continue
        row_errors = len(errors)
        definition = lookups.definition(row.get("metric"))
        if isinstance(definition, str):
            errors.append({"index": index, "field": "metric", "message": definition})
        system_id = systems.get(row.get("system"))
        if system_id is None:
            errors.append(
                {"index": index, "field": "system", "message": f"unknown system '{row.get('system')}'."}
            )
        workload_id = workloads.get(row.get("workload"))
        if workload_id is None:
            errors.append(
                {"index": index, "field": "workload", "message": f"unknown workload '{row.get('workload')}'."}
            )
        value = _parse_value(row.get("value"))
        if isinstance(value, str):
            errors.append({"index": index, "field": "value", "message": value})
        observed_at = _parse_time(row.get("observed_at"), latest)
        if isinstance(observed_at, str):
            errors.append({"index": index, "field": "observed_at", "message": observed_at})
        unit = row.get("unit")
        if not isinstance(definition, str):
            unit = unit or definition.unit
            if not isinstance(unit, str):
                errors.append({"index": index, "field": "unit", "message": "unit must be a string."})
            elif unit != definition.unit:
                try:
                    factor = unit_factor(unit, definition.unit)
                except UnitError as exc:
                    errors.append({"index": index, "field": "unit", "message": str(exc)})
                else:
                    if not isinstance(value, str):
                        value = value * factor
                        if not math.isfinite(value):
                            errors.append({"index": index, "field": "value", "message": "value overflows."})
        run_id = row.get("run_id") or ""
        source = row.get("source") or ""
        tags = row.get("tags") or {}
        if not isinstance(run_id, str) or len(run_id) > 120:
            errors.append(
                {"index": index, "field": "run_id", "message": "run_id must be text of ≤120 characters."}
            )
        if not isinstance(source, str) or len(source) > 100:
            errors.append(
                {"index": index, "field": "source", "message": "source must be text of ≤100 characters."}
            )
        if not isinstance(tags, dict):
            errors.append({"index": index, "field": "tags", "message": "tags must be an object."})
        if len(errors) > row_errors:
            continue
        definition_id = definition.pk
        natural_key = (definition_id, system_id, workload_id, run_id, observed_at)
        previous = seen.get(natural_key)
        if previous is not None:
            if previous[0] != value:
                errors.append(
                    {
                        "index": index,
                        "field": "value",
                        "message": f"row {previous[1]} has the same metric, system, workload, run_id and "
                        f"observed_at with value {previous[0]}.",
                    }
                )
            continue
        seen[natural_key] = (value, index)
        touched.add(definition_id)
        out.append(
            (
                index,
                definition_id,
                system_id,
                workload_id,
                value,
                unit,
                observed_at,
                run_id,
                source,
                JSONB_VERSION + orjson.dumps(tags) if tags else EMPTY_TAGS,
            )
        )
    return out, errors, touched


COPY_TYPES = ["int4", "int8", "int8", "int8", "float8", "text", "timestamptz", "text", "text", "bytea"]
TEMP_TABLE = """
CREATE TEMP TABLE ingest_rows (
    idx int, definition_id bigint, system_id bigint, workload_id bigint, value float8, unit text,
    observed_at timestamptz, run_id text, source text, tags jsonb
) ON COMMIT DROP
"""
MOVE_ROWS = """
INSERT INTO metrics_observation
    (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags, batch_id)
SELECT definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags, %s
FROM ingest_rows
ON CONFLICT (definition_id, system_id, workload_id, run_id, observed_at) DO NOTHING
"""
CONFLICTS = """
SELECT t.idx, o.value FROM ingest_rows t
JOIN metrics_observation o USING (definition_id, system_id, workload_id, run_id, observed_at)
WHERE o.value <> t.value ORDER BY t.idx
"""


# The referenced rows, locked FOR KEY SHARE until commit: what per-row foreign keys would do, once
# per distinct id instead of once per row. A definition must still be active.
LOCK_REFERENCES = (
    ("metrics_metricdefinition", "AND status = 'active'", 1),
    ("metrics_system", "", 2),
    ("metrics_workload", "", 3),
)
MSG_REFERENCE_CHANGED = (
    "A metric, system or workload of this batch changed while it was written; send it again."
)


def _lock_references(raw, rows: list[tuple]) -> None:
    for table, condition, column in LOCK_REFERENCES:
        wanted = sorted({row[column] for row in rows})
        raw.execute(f"SELECT id FROM {table} WHERE id = ANY(%s) {condition} FOR KEY SHARE", (wanted,))
        if len(raw.fetchall()) != len(wanted):
            raise ApplicationError(MSG_REFERENCE_CHANGED, status=409)


# Does any row of the batch belong to a run already stored? The natural key includes run_id, so when
# none does, no row can collide and the batch is copied straight into the table.
RUNS_EXIST = """
SELECT 1 FROM metrics_observation
WHERE (definition_id, system_id, workload_id, run_id) IN (
    SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::text[])
) LIMIT 1
"""
DIRECT_COPY = (
    "COPY metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, "
    "tags, batch_id) FROM STDIN (FORMAT BINARY)"
)
DIRECT_TYPES = ["int8", "int8", "int8", "float8", "text", "timestamptz", "text", "text", "bytea", "int8"]


def _runs_exist(raw, rows: list[tuple]) -> bool:
    runs = sorted({(row[1], row[2], row[3], row[7]) for row in rows})
    raw.execute(RUNS_EXIST, [list(column) for column in zip(*runs, strict=True)])
    return raw.fetchone() is not None


def _copy_direct(raw, rows: list[tuple], batch_id: int) -> int:
    with raw.copy(DIRECT_COPY) as copy:
        copy.set_types(DIRECT_TYPES)
        for row in rows:
            copy.write_row((*row[1:], batch_id))
    return len(rows)


def _copy_and_move(rows: list[tuple], batch_id: int) -> int:
    with connection.cursor() as cursor:
        raw = cursor.cursor
        _lock_references(raw, rows)
        if not _runs_exist(raw, rows):
            try:
                with transaction.atomic():  # a savepoint: only the direct copy is undone on a collision
                    return _copy_direct(raw, rows, batch_id)
            except psycopg.errors.UniqueViolation:
                pass  # a concurrent batch stored the same new run first: merge row by row below
        return _merge(raw, rows, batch_id)


def _merge(raw, rows: list[tuple], batch_id: int) -> int:
    """Rows of runs already stored: same value is a no-op, another value an error for that row."""
    raw.execute(TEMP_TABLE)
    with raw.copy("COPY ingest_rows FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(COPY_TYPES)
        for row in rows:
            copy.write_row(row)
    raw.execute(MOVE_ROWS, (batch_id,))
    inserted = raw.rowcount
    if inserted < len(rows):
        raw.execute(CONFLICTS)
        conflicts = raw.fetchall()
        if conflicts:
            raise ApplicationError(
                MSG_INVALID.format(count=len(conflicts), total=len(rows)),
                status=422,
                errors=[
                    {
                        "index": index,
                        "field": "value",
                        "message": f"already recorded with value {stored} for the same metric, system, "
                        "workload, run_id and observed_at.",
                    }
                    for index, stored in conflicts
                ],
            )
    raw.execute("DROP TABLE ingest_rows")
    return inserted


def request_fingerprint(body: bytes, content_type: str = "") -> str:
    return hashlib.sha256(content_type.encode() + b"\0" + body).hexdigest()


def observations_ingest(
    *,
    rows: list[Any],
    submitted_by,
    source: str = "",
    idempotency_key: str | None = None,
    fingerprint: str | None = None,
) -> IngestResult:
    """Validate and store one batch. With an idempotency key, a replay returns the first answer."""
    if idempotency_key:
        replay = observations_replay(user=submitted_by, key=idempotency_key, fingerprint=fingerprint)
        if replay is not None:
            return replay
    if not isinstance(rows, list):
        raise ApplicationError("observations must be a list.", status=400, field="observations")
    if len(rows) > MAX_ROWS:
        raise ApplicationError(MSG_TOO_MANY, status=413, field="observations", extra={"limit": MAX_ROWS})
    if not rows:
        raise ApplicationError("The batch is empty.", status=400, field="observations")

    lookups = _Lookups()
    valid, errors, touched = _validate(rows, lookups)
    if errors:
        raise ApplicationError(
            MSG_INVALID.format(count=len({e["index"] for e in errors}), total=len(rows)),
            status=422,
            errors=errors,
        )
    try:
        with transaction.atomic():
            result = _store(valid, touched, lookups.refs(touched), len(rows), submitted_by, source)
            if idempotency_key:
                IdempotencyRecord.objects.create(
                    user=submitted_by,
                    scope=IDEMPOTENCY_SCOPE,
                    key=idempotency_key,
                    request_hash=fingerprint or "",
                    response_status=201,
                    response_body=result.as_dict(),
                )
    except IntegrityError:
        # Two requests with one key at once: the loser replays the winner's answer.
        if idempotency_key:
            replay = observations_replay(user=submitted_by, key=idempotency_key, fingerprint=fingerprint)
            if replay is not None:
                return replay
        raise
    return result


def _store(
    valid: list[tuple], touched: set[int], refs: list[str], received: int, submitted_by, source: str
) -> IngestResult:
    from metrics.tasks import batch_announce

    workload_ids = sorted({row[3] for row in valid})
    batch = IngestBatch.objects.create(
        submitted_by=submitted_by if submitted_by and submitted_by.is_authenticated else None,
        source=source[:100],
        received=received,
        inserted=0,
        definition_ids=sorted(touched),
        workload_ids=workload_ids,
    )
    inserted = _copy_and_move(valid, batch.pk)
    IngestBatch.objects.filter(pk=batch.pk).update(inserted=inserted)
    if inserted:
        transaction.on_commit(lambda: batch_announce.delay(batch.pk))
    return IngestResult(batch.pk, received, inserted, refs)


def observations_replay(*, user, key: str, fingerprint: str | None) -> IngestResult | None:
    """The stored first answer for this Idempotency-Key, None if new; 422 if the body differs."""
    record = IdempotencyRecord.objects.filter(user=user, scope=IDEMPOTENCY_SCOPE, key=key).first()
    if record is None:
        return None
    if record.request_hash != (fingerprint or ""):
        raise ApplicationError(MSG_KEY_REUSED, status=422, field="Idempotency-Key")
    body = record.response_body
    return IngestResult(body["batch"], body["received"], body["inserted"], body["definitions"], replayed=True)
