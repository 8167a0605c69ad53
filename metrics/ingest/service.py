"""Observation ingest, the one service every way in goes through.

A raw body (batch API, import command, OTLP receiver) or rows already built (Prometheus pull) is
parsed (formats), checked (check, against rules), and written (write) in one transaction, which also
sends `observations_ingested` right after the write: receivers queue their work through core.outbox,
so it commits with the batch and is published after commit. With an Idempotency-Key the stored first
answer is replayed instead, from here only. Any bad row of a batch → ApplicationError(422) listing
every bad row, nothing written; OTLP stores the good points and counts the bad ones.
Speed matters (benchmarks/ingest.py): no per-row Python work beyond the checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from core import idempotency
from core.errors import ApplicationError
from core.telemetry.instruments import INGEST_ROWS
from metrics.ingest import streams
from metrics.ingest.check import Lookups, ValidRows, check_rows
from metrics.ingest.formats import as_dict, decode_rows, otlp
from metrics.ingest.formats.histograms import Histogram
from metrics.ingest.rules import MSG_INVALID
from metrics.ingest.write import batch_write
from metrics.models import IngestBatch
from metrics.signals import observations_ingested

MAX_ROWS = 50_000
BATCH_SCOPE = "observations.batch"
OTLP_SCOPE = "observations.otlp"
# How many problems an OTLP error_message names before it counts the rest.
MESSAGE_PROBLEMS = 5

MSG_TOO_MANY = f"A batch holds at most {MAX_ROWS:,} observations; split it into smaller batches."


@dataclass
class IngestPreview:
    """What a batch would do, written nowhere: how many rows pass, every problem of every bad row
    ({index, field, message}, as a 422 lists them), and the first rows as they were read."""

    received: int
    errors: list[dict[str, Any]]
    first_rows: list[Any]

    @property
    def refused(self) -> int:
        return len({error["index"] for error in self.errors})

    @property
    def valid(self) -> int:
        return self.received - self.refused


class _Answer(Protocol):
    def as_dict(self) -> dict[str, Any]: ...


Result = TypeVar("Result", bound=_Answer)


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

    @classmethod
    def from_dict(cls, body: dict[str, Any], replayed: bool = False) -> IngestResult:
        return cls(body["batch"], body["received"], body["inserted"], body["definitions"], replayed)


@dataclass
class OtlpResult:
    accepted: int
    rejected: list[otlp.Rejected] = field(default_factory=list)
    batch: IngestResult | None = None
    replayed: bool = False

    @property
    def error_message(self) -> str:
        if not self.rejected:
            return ""
        named = [f"{problem.label}: {problem.message}" for problem in self.rejected[:MESSAGE_PROBLEMS]]
        more = len(self.rejected) - len(named)
        return " ".join(named) + (f" (and {more} more)" if more else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "accepted": self.accepted,
            "rejected": [[problem.label, problem.message] for problem in self.rejected],
            "batch": self.batch.as_dict() if self.batch else None,
        }

    @classmethod
    def from_dict(cls, body: dict[str, Any], replayed: bool = False) -> OtlpResult:
        batch = IngestResult.from_dict(body["batch"], replayed) if body["batch"] else None
        return cls(
            body["accepted"], [otlp.Rejected(*problem) for problem in body["rejected"]], batch, replayed
        )


# --- entry points --------------------------------------------------------------------------------------


def observations_ingest(
    *, body: bytes, content_type: str, actor: User, source: str = "", idempotency_key: str | None = None
) -> IngestResult:
    """One all-or-nothing batch from a JSON, NDJSON or CSV body; a repeated key replays the first answer.
    The actor needs metrics.add_observation, which the API's write rule checks before the body is read."""
    return _answered_once(
        user=actor,
        scope=BATCH_SCOPE,
        key=idempotency_key,
        fingerprint=idempotency.body_fingerprint(body, content_type) if idempotency_key else "",
        status=201,
        act=lambda: _ingest(decode_rows(body, content_type), actor=actor, source=source),
        replay=IngestResult.from_dict,
    )


def observations_preview(*, body: bytes, content_type: str, first: int = 10) -> IngestPreview:
    """The batch `observations_ingest` would take from this body, checked by the same rules and
    written nowhere (the ingest page's preview). An unreadable, empty or too large body raises as
    the batch would."""
    rows = decode_rows(body, content_type)
    *_, errors = _checked(rows)
    return IngestPreview(len(rows), errors, [as_dict(row) for row in rows[:first]])


def observations_ingest_rows(*, rows: list[Any], actor: User | None, source: str = "") -> IngestResult:
    """One all-or-nothing batch of rows a caller already built (the Prometheus pull, the demo data).
    No role is checked: the callers are the app's own jobs; `actor` is None for an automatic batch."""
    return _ingest(rows, actor=actor, source=source)


def observations_ingest_otlp(
    *,
    body: bytes,
    content_type: str,
    content_encoding: str = "",
    actor: User,
    client: str = "",
    idempotency_key: str | None = None,
) -> OtlpResult:
    """An OTLP/HTTP export: the points that pass the rules are stored, the others counted and named.
    Exporters send no key, and a retried export is a no-op through the natural key; with one, the
    first answer is replayed as for a batch."""

    def act() -> OtlpResult:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        request = otlp.request_decode(body, content_type, content_encoding, limit)
        points, rejected = otlp.points_from_request(request, otlp.otel_names())
        source = f"{otlp.SOURCE} {client}".strip()[:100]
        # The streams' state is read, used and moved in the batch's transaction, under its row locks.
        with transaction.atomic():
            pairs = streams.points_as_deltas(points, streams.streams_lock(points))
            result, stored = _ingest_partial([p for _, p in pairs], rejected, actor=actor, source=source)
            streams.streams_advance([pairs[i] for i in stored])
        return result

    fingerprint = ""
    if idempotency_key:
        # By the bytes, under the media type and the encoding: the same export gzipped is another body.
        encoding = (content_encoding or "identity").strip().lower()
        fingerprint = idempotency.body_fingerprint(body, f"{otlp.media_type(content_type)}+{encoding}")
    return _answered_once(
        user=actor,
        scope=OTLP_SCOPE,
        key=idempotency_key,
        fingerprint=fingerprint,
        status=200,
        act=act,
        replay=OtlpResult.from_dict,
    )


@dataclass(frozen=True)
class ImportStep:
    """One stored batch of an import: its first row's position in the file, and the answer."""

    start: int
    size: int
    result: IngestResult


class BatchRefused(ApplicationError):
    """A batch of an import was refused; `start` is its first row's position in the file."""

    def __init__(self, error: ApplicationError, start: int) -> None:
        super().__init__(error.message, status=error.status, errors=error.errors, extra=error.extra)
        self.start = start


def observations_import(
    *, body: bytes, content_type: str, actor: User, source: str, batch_size: int
) -> tuple[int, Iterator[ImportStep]]:
    """A file in batches of `batch_size`: (how many rows it holds, the batches as they are stored).
    Each batch is all-or-nothing; a refused one raises BatchRefused, the earlier ones stay stored."""
    rows = decode_rows(body, content_type)

    def steps() -> Iterator[ImportStep]:
        for start in range(0, len(rows), batch_size):
            chunk = rows[start : start + batch_size]
            try:
                result = _ingest(chunk, actor=actor, source=source)
            except ApplicationError as exc:
                raise BatchRefused(exc, start) from exc
            yield ImportStep(start, len(chunk), result)

    return len(rows), steps()


# --- the one path --------------------------------------------------------------------------------------


def _answered_once(
    *,
    user: User,
    scope: str,
    key: str | None,
    fingerprint: str,
    status: int,
    act: Callable[[], Result],
    replay: Callable[[dict[str, Any], bool], Result],
) -> Result:
    """`act()`, or with a key the stored first answer; the answer is stored in the batch's transaction."""
    if not key:
        return act()
    with transaction.atomic():
        # The same key at once: the second waits here for the first to commit, then replays it.
        idempotency.claim(user=user, scope=scope, key=key)
        record = idempotency.recorded(user=user, scope=scope, key=key, request_hash=fingerprint)
        if record is not None:
            return replay(record.response_body, True)
        result = act()
        idempotency.remember(
            user=user,
            scope=scope,
            key=key,
            request_hash=fingerprint,
            status_code=status,
            body=result.as_dict(),
        )
    return result


def _ingest(
    rows: list[Any],
    *,
    actor: User | None,
    source: str,
    histograms: dict[int, Histogram] | None = None,
) -> IngestResult:
    """Check every row, then write the batch and announce it in one transaction. The rows at the
    positions of `histograms` are histogram points: checked as their mean, stored as their buckets."""
    lookups, valid, errors = _checked(rows)
    if errors:
        refused = len({e["index"] for e in errors})
        INGEST_ROWS.labels(outcome="rejected").inc(refused)
        raise ApplicationError(MSG_INVALID.format(count=refused, total=len(rows)), status=422, errors=errors)
    with transaction.atomic():
        batch = batch_write(
            valid, received=len(rows), submitted_by=actor, source=source, histograms=histograms or {}
        )
        if batch.inserted:
            # Receivers queue their work through core.outbox here: it commits with the batch or not at all.
            observations_ingested.send(
                sender=IngestBatch,
                batch_id=batch.pk,
                definition_ids=batch.definition_ids,
                workload_ids=batch.workload_ids,
            )
    INGEST_ROWS.labels(outcome="accepted").inc(len(rows))
    return IngestResult(batch.pk, len(rows), batch.inserted, lookups.refs(batch.definition_ids))


def _checked(rows: Any) -> tuple[Lookups, ValidRows, list[dict[str, Any]]]:
    """The batch's shape, then every row against the rules: the one check a write and a preview share."""
    if not isinstance(rows, list):
        raise ApplicationError("observations must be a list.", status=400, field="observations")
    if len(rows) > MAX_ROWS:
        raise ApplicationError(MSG_TOO_MANY, status=413, field="observations", extra={"limit": MAX_ROWS})
    if not rows:
        raise ApplicationError("The batch is empty.", status=400, field="observations")
    lookups = Lookups()
    valid, errors = check_rows(rows, lookups)
    return lookups, valid, errors


def _ingest_partial(
    points: list[otlp.Point], rejected: list[otlp.Rejected], *, actor: User | None, source: str
) -> tuple[OtlpResult, list[int]]:
    """OTLP asks the receiver to keep what it can: when the batch is refused, it is sent again with the
    rows the refusal did not name. Every rule stays in the one path; nothing is written here. Also
    the positions of the points stored."""
    rejected = list(rejected)
    # Points refused before they became rows; the rows' own verdicts are counted by _ingest.
    INGEST_ROWS.labels(outcome="rejected").inc(len(rejected))
    rows = [point.row for point in points]
    if not rows:
        return OtlpResult(accepted=0, rejected=rejected), []
    histograms = {i: point.histogram for i, point in enumerate(points) if point.histogram is not None}
    try:
        batch = _ingest(rows, actor=actor, source=source, histograms=histograms)
        return OtlpResult(accepted=len(rows), rejected=rejected, batch=batch), list(range(len(rows)))
    except ApplicationError as exc:
        if exc.status != 422 or not exc.errors:
            raise
        refused = _first_error_per_row(exc.errors)
    rejected.extend(otlp.Rejected(points[index].label, message) for index, message in sorted(refused.items()))
    kept = [index for index in range(len(rows)) if index not in refused]
    if not kept:
        return OtlpResult(accepted=0, rejected=rejected), []
    # The rows it did not name passed every rule; a 422 now (a definition changed in between) is the
    # client's to retry.
    batch = _ingest(
        [rows[i] for i in kept],
        actor=actor,
        source=source,
        histograms={j: histograms[i] for j, i in enumerate(kept) if i in histograms},
    )
    return OtlpResult(accepted=len(kept), rejected=rejected, batch=batch), kept


def _first_error_per_row(errors: list[dict[str, Any]]) -> dict[int, str]:
    refused: dict[int, str] = {}
    for error in errors:
        index = error.get("index")
        if isinstance(index, int) and index not in refused:
            refused[index] = error["message"]
    return refused
