"""Observation ingest: validate every row without ORM objects, then COPY into PostgreSQL.

A batch is all-or-nothing: any bad row → ApplicationError(422) listing every bad row, nothing written.
Speed matters (benchmarks/ingest.py). Typed rows from the JSON fast path are checked column by column
against cached lookups; anything else, and any batch the column check refuses, goes row by row so every
error is named. Rows of new runs are copied in binary straight into the table; rows of runs already
stored go through a temporary table and one INSERT … ON CONFLICT DO NOTHING.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import repeat
from typing import Any

import orjson
import psycopg
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from core.errors import ApplicationError
from core.models import IdempotencyRecord
from metrics.ingest_formats import ObservationIn, as_dict
from metrics.models import IngestBatch, MetricDefinition, System, Workload
from metrics.units import UnitError, unit_factor

MAX_ROWS = 50_000
# jsonb's binary wire format is a version byte (1) and the JSON text. Tags are encoded once here and
# copied as text (psycopg's C text dumper), instead of through its per-row Python JSON dumper.
JSONB_VERSION = "\x01"
EMPTY_TAGS = JSONB_VERSION + "{}"
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


# Column positions in ValidRows.columns, which is also the order COPY writes them in.
DEFINITION, SYSTEM, WORKLOAD, VALUE, UNIT, OBSERVED_AT, RUN_ID, SOURCE, TAGS = range(9)


@dataclass
class ValidRows:
    """Checked rows as columns, ready for COPY; `indexes` are their positions in the request."""

    columns: tuple[list, ...]
    indexes: list[int]
    # False when rows may repeat a natural key within the batch: the column check leaves that to
    # the primary key (a repeat makes the direct copy fail) and to the merge, which names it.
    repeats_checked: bool = True

    def __len__(self) -> int:
        return len(self.indexes)

    def distinct(self, *positions: int) -> list:
        """Sorted distinct values of one column, or of tuples of several."""
        if len(positions) == 1:
            return sorted(set(self.columns[positions[0]]))
        return sorted(set(zip(*(self.columns[p] for p in positions), strict=True)))


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
    if isinstance(raw, datetime):  # a typed row from the JSON fast path, already parsed
        moment = raw
    elif not isinstance(raw, str):
        return "observed_at must be an ISO 8601 timestamp with a timezone."
    else:
        try:
            moment = datetime.fromisoformat(raw)
        except ValueError:
            return f"observed_at '{raw[:40]}' is not an ISO 8601 timestamp."
    if moment.tzinfo is None:
        return "observed_at needs a timezone (e.g. '…Z' or '+00:00')."
    if moment > latest:
        return "observed_at is more than 5 minutes in the future."
    return moment


MSG_TAGS = "tags must be a JSON object without NUL characters."


def _tags_wire(tags: Any) -> str | None:
    """Tags as jsonb wire text, or None when they are not an object jsonb can hold."""
    if not tags:
        return EMPTY_TAGS if tags in ({}, None) else None
    if not isinstance(tags, dict):
        return None
    try:
        encoded = orjson.dumps(tags)
    except orjson.JSONEncodeError:  # integers beyond 64 bits, which jsonb keeps as numeric
        try:
            encoded = json.dumps(tags, allow_nan=False, separators=(",", ":")).encode()
        except (TypeError, ValueError):
            return None
    # jsonb refuses an escaped NUL; a raw one cannot appear in encoded JSON.
    return None if b"\\u0000" in encoded else JSONB_VERSION + encoded.decode()


def _text_problem(name: str, text: Any, limit: int) -> str | None:
    if not isinstance(text, str) or len(text) > limit:
        return f"{name} must be text of ≤{limit} characters."
    if "\x00" in text:  # PostgreSQL text cannot hold U+0000
        return f"{name} cannot contain the NUL character (U+0000)."
    return None


def _validate_typed(rows: list[ObservationIn], lookups: _Lookups) -> ValidRows | None:
    """The whole batch checked column by column; None if any row fails (the row-by-row check then
    names every problem). Types, lengths and timezones were already checked while decoding."""
    definitions: dict[str, MetricDefinition] = {}
    for ref in {row.metric for row in rows}:
        definition = lookups.definition(ref)
        if isinstance(definition, str):
            return None
        definitions[ref] = definition
    systems, workloads = lookups.systems, lookups.workloads
    try:
        system_ids = [systems[row.system] for row in rows]
        workload_ids = [workloads[row.workload] for row in rows]
    except KeyError:
        return None
    observed = [row.observed_at for row in rows]
    if max(observed) > timezone.now() + CLOCK_SKEW:
        return None
    metrics = [row.metric for row in rows]
    definition_unit = {ref: definition.unit for ref, definition in definitions.items()}
    units = [row.unit or definition_unit[row.metric] for row in rows]
    values = [row.value for row in rows]
    factors = {}
    for ref, unit in set(zip(metrics, units, strict=True)):
        if unit != definition_unit[ref]:
            try:
                factors[ref, unit] = unit_factor(unit, definition_unit[ref])
            except UnitError:
                return None
    if factors:
        values = [
            value * factors.get(pair, 1.0)
            for value, pair in zip(values, zip(metrics, units, strict=True), strict=True)
        ]
    if not all(map(math.isfinite, values)):
        return None
    definition_id = {ref: definition.pk for ref, definition in definitions.items()}
    columns = (
        [definition_id[ref] for ref in metrics],
        system_ids,
        workload_ids,
        values,
        units,
        observed,
        [row.run_id for row in rows],
        [row.source for row in rows],
        [_tags_wire(row.tags) for row in rows],
    )
    if None in columns[TAGS]:
        return None
    # Hashing 10,000 fresh timezone-aware datetimes to look for repeats took a fifth of the request.
    return ValidRows(columns, list(range(len(rows))), repeats_checked=False)


def _repeat_error(index: int, first_index: int, first_value: float) -> dict[str, Any]:
    return {
        "index": index,
        "field": "value",
        "message": f"row {first_index} has the same metric, system, workload, run_id and observed_at "
        f"with value {first_value}.",
    }


def _validate(rows: list[Any], lookups: _Lookups) -> tuple[ValidRows, list[dict[str, Any]]]:
    """Row by row: (the good rows, an error for every problem of every bad row)."""
    latest = timezone.now() + CLOCK_SKEW
    errors: list[dict[str, Any]] = []
    out: list[tuple] = []
    seen: dict[tuple, tuple[float, int]] = {}
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
            problem = _text_problem("unit", unit, 40)
            if problem:
                errors.append({"index": index, "field": "unit", "message": problem})
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
        for name, text, limit in (("run_id", run_id, 120), ("source", source, 100)):
            problem = _text_problem(name, text, limit)
            if problem:
                errors.append({"index": index, "field": name, "message": problem})
        tags_wire = _tags_wire(tags)
        if tags_wire is None:
            errors.append({"index": index, "field": "tags", "message": MSG_TAGS})
        if len(errors) > row_errors:
            continue
        definition_id = definition.pk
        natural_key = (definition_id, system_id, workload_id, run_id, observed_at)
        previous = seen.get(natural_key)
        if previous is not None:
            if previous[0] != value:
                errors.append(_repeat_error(index, previous[1], previous[0]))
            continue
        seen[natural_key] = (value, index)
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
                tags_wire,
            )
        )
    indexes, *columns = zip(*out, strict=True) if out else ((),) * 10
    return ValidRows(tuple(list(column) for column in columns), list(indexes)), errors


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
# per distinct id instead of once per row, in one round trip. A definition must still be active.
LOCK_REFERENCES = """
SELECT
    (SELECT count(*) FROM (
        SELECT 1 FROM metrics_metricdefinition WHERE id = ANY(%s) AND status = 'active' FOR KEY SHARE
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


def _copy_and_move(valid: ValidRows, batch_id: int) -> int:
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
            raise ApplicationError(
                MSG_INVALID.format(count=len(repeats), total=len(valid)),
                status=422,
                errors=[_repeat_error(*repeat_row) for repeat_row in repeats],
            )
    raw.execute(MOVE_ROWS, (batch_id,))
    inserted = raw.rowcount
    if inserted < len(valid):
        raw.execute(CONFLICTS)
        conflicts = raw.fetchall()
        if conflicts:
            raise ApplicationError(
                MSG_INVALID.format(count=len(conflicts), total=len(valid)),
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
    valid = _validate_typed(rows, lookups) if isinstance(rows[0], ObservationIn) else None
    errors = []
    if valid is None:
        valid, errors = _validate([as_dict(row) for row in rows], lookups)
    if errors:
        raise ApplicationError(
            MSG_INVALID.format(count=len({e["index"] for e in errors}), total=len(rows)),
            status=422,
            errors=errors,
        )
    try:
        with transaction.atomic():
            result = _store(valid, len(rows), lookups, submitted_by, source)
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


def _store(valid: ValidRows, received: int, lookups: _Lookups, submitted_by, source: str) -> IngestResult:
    from metrics.tasks import batch_announce

    definition_ids = valid.distinct(DEFINITION)
    batch = IngestBatch.objects.create(
        submitted_by=submitted_by if submitted_by and submitted_by.is_authenticated else None,
        source=source[:100],
        received=received,
        inserted=len(valid),  # corrected below when some rows were already stored
        definition_ids=definition_ids,
        workload_ids=valid.distinct(WORKLOAD),
    )
    inserted = _copy_and_move(valid, batch.pk)
    if inserted != batch.inserted:
        IngestBatch.objects.filter(pk=batch.pk).update(inserted=inserted)
    if inserted:
        transaction.on_commit(lambda: batch_announce.delay(batch.pk))
    return IngestResult(batch.pk, received, inserted, lookups.refs(definition_ids))


def observations_replay(*, user, key: str, fingerprint: str | None) -> IngestResult | None:
    """The stored first answer for this Idempotency-Key, None if new; 422 if the body differs."""
    record = IdempotencyRecord.objects.filter(user=user, scope=IDEMPOTENCY_SCOPE, key=key).first()
    if record is None:
        return None
    if record.request_hash != (fingerprint or ""):
        raise ApplicationError(MSG_KEY_REUSED, status=422, field="Idempotency-Key")
    body = record.response_body
    return IngestResult(body["batch"], body["received"], body["inserted"], body["definitions"], replayed=True)
