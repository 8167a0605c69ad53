"""Observation ingest: one all-or-nothing batch per call, answered once per Idempotency-Key.

Any bad row → ApplicationError(422) listing every bad row, nothing written. Rows are checked in
ingest_rows and written in ingest_copy; speed matters (benchmarks/ingest.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from django.db import transaction

from core import idempotency
from core.errors import ApplicationError
from core.outbox import outbox_add
from core.telemetry.instruments import INGEST_ROWS
from metrics.ingest_formats import ObservationIn, as_dict
from metrics.models import IngestBatch
from metrics.services.ingest_copy import rows_write
from metrics.services.ingest_rows import (
    DEFINITION,
    MSG_INVALID,
    OBSERVED_AT,
    WORKLOAD,
    Lookups,
    ValidRows,
    check_rows,
    check_typed_rows,
)

MAX_ROWS = 50_000
IDEMPOTENCY_SCOPE = "observations.batch"

MSG_TOO_MANY = f"A batch holds at most {MAX_ROWS:,} observations; split it into smaller batches."


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

    lookups = Lookups()
    valid = check_typed_rows(rows, lookups) if isinstance(rows[0], ObservationIn) else None
    errors = []
    if valid is None:
        valid, errors = check_rows([as_dict(row) for row in rows], lookups)
    if errors:
        INGEST_ROWS.labels(outcome="rejected").inc(len({e["index"] for e in errors}))
        raise ApplicationError(
            MSG_INVALID.format(count=len({e["index"] for e in errors}), total=len(rows)),
            status=422,
            errors=errors,
        )
    with transaction.atomic():
        if idempotency_key:
            # The same key at once: the second waits here for the first to commit, then replays it.
            idempotency.claim(user=submitted_by, scope=IDEMPOTENCY_SCOPE, key=idempotency_key)
            replay = observations_replay(user=submitted_by, key=idempotency_key, fingerprint=fingerprint)
            if replay is not None:
                return replay
        result = _store(valid, len(rows), lookups, submitted_by, source)
        if idempotency_key:
            idempotency.remember(
                user=submitted_by,
                scope=IDEMPOTENCY_SCOPE,
                key=idempotency_key,
                request_hash=fingerprint or "",
                status_code=201,
                body=result.as_dict(),
            )
    INGEST_ROWS.labels(outcome="accepted").inc(result.received)
    return result


def _store(valid: ValidRows, received: int, lookups: Lookups, submitted_by, source: str) -> IngestResult:
    definition_ids = valid.distinct(DEFINITION)
    batch = IngestBatch.objects.create(
        submitted_by=submitted_by if submitted_by and submitted_by.is_authenticated else None,
        source=source[:100],
        received=received,
        inserted=len(valid),  # corrected below when some rows were already stored
        definition_ids=definition_ids,
        workload_ids=valid.distinct(WORKLOAD),
        # The days the batch touched, for the rollup refresh (metrics.rollups).
        # In UTC: PostgreSQL refuses offsets beyond ±15:59, which Python accepts.
        observed_from=min(valid.columns[OBSERVED_AT]).astimezone(UTC) if len(valid) else None,
        observed_to=max(valid.columns[OBSERVED_AT]).astimezone(UTC) if len(valid) else None,
    )
    inserted = rows_write(valid, batch.pk)
    if inserted != batch.inserted:
        IngestBatch.objects.filter(pk=batch.pk).update(inserted=inserted)
    if inserted:
        outbox_add(task="metrics.tasks.batch_announce", args=[batch.pk])
    return IngestResult(batch.pk, received, inserted, lookups.refs(definition_ids))


def observations_replay(*, user, key: str, fingerprint: str | None) -> IngestResult | None:
    """The stored first answer for this Idempotency-Key, None if new; 422 if the body differs.

    `fingerprint` is core.idempotency.body_fingerprint of the request, as for every other endpoint."""
    record = idempotency.recorded(user=user, scope=IDEMPOTENCY_SCOPE, key=key, request_hash=fingerprint or "")
    if record is None:
        return None
    body = record.response_body
    return IngestResult(body["batch"], body["received"], body["inserted"], body["definitions"], replayed=True)
