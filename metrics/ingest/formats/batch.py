"""The batch formats: JSON {"observations": [...]}, NDJSON and CSV (batch API and import command).

A JSON body is first decoded straight into typed rows (`ObservationIn`) by msgspec, which checks types,
lengths and timezones in C; that is the fast path benchmarks/ingest.py measures. A body that does not
fit it exactly (a value sent as text, a null, a naive timestamp…) is decoded into plain dicts instead,
and the one check (check.check_rows) names each problem. An NDJSON line or CSV tags cell
that cannot be read becomes that row's error (`Unreadable`), not the whole body's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, cast

import msgspec

from core.api.parsers import JSONProblem, json_error, json_loads
from core.csv_input import csv_records
from core.errors import ApplicationError
from metrics.ingest.rules import TEXT_LIMITS


class ObservationIn(msgspec.Struct, gc=False):
    """One well-formed row; check.check_rows still checks references, finiteness, units and time."""

    metric: str
    system: str
    workload: str
    value: float
    observed_at: Annotated[datetime, msgspec.Meta(tz=True)]
    unit: Annotated[str, msgspec.Meta(max_length=TEXT_LIMITS["unit"])] | None = None
    run_id: Annotated[str, msgspec.Meta(max_length=TEXT_LIMITS["run_id"])] = ""
    source: Annotated[str, msgspec.Meta(max_length=TEXT_LIMITS["source"])] = ""
    tags: dict[str, Any] | None = None


class _TypedBody(msgspec.Struct, gc=False):
    observations: list[ObservationIn]


_typed_body = msgspec.json.Decoder(_TypedBody)


@dataclass(frozen=True)
class Unreadable:
    """An NDJSON line, or a CSV tags cell, that is not JSON the row check can read."""

    message: str
    field: str | None = None


def as_dict(row: Any) -> Any:
    """A typed row as the dict the row-by-row check reads; anything else unchanged."""
    return msgspec.structs.asdict(row) if isinstance(row, ObservationIn) else row


def decode_rows(body: bytes, content_type: str) -> list[Any]:
    """Rows from a JSON body {"observations": [...]}, NDJSON (one object per line) or CSV."""
    kind = content_type.split(";")[0].strip().lower()
    if kind in ("application/x-ndjson", "application/ndjson", "application/jsonl"):
        return [_line(line) for line in body.splitlines() if line.strip()]
    if kind in ("text/csv", "application/csv"):
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ApplicationError("The CSV is not UTF-8.", status=400, field="body") from exc
        rows = csv_records(text, field="body")
        for row in rows:
            if row.get("tags"):
                row["tags"] = _tags_cell(row["tags"])
        return rows
    if kind not in ("application/json", ""):
        raise ApplicationError(
            f"Unsupported content type '{kind}': send application/json, application/x-ndjson or text/csv.",
            status=415,
            field="Content-Type",
        )
    # An escaped NUL is the one way to put U+0000, which PostgreSQL text refuses, into a JSON string:
    # such bodies go row by row, where the field holding it is named.
    if b"\\u0000" not in body:
        try:
            return _typed_body.decode(body).observations
        # DecodeError also for rows that are valid JSON but not well-formed rows; msgspec recurses
        # into tags and raises RecursionError about 1,000 levels down.
        except (msgspec.DecodeError, RecursionError):
            pass
    try:
        document = _loads(body)
    except JSONProblem as exc:
        raise json_error(exc) from exc
    if not isinstance(document, dict) or "observations" not in document:
        raise ApplicationError('The body must be {"observations": [...]}.', status=400, field="observations")
    # Whatever JSON value was sent: the ingest service refuses one that is not a list, naming it.
    return cast("list[Any]", document["observations"])


def _loads(raw: bytes | str) -> Any:
    # No depth or text walk over the whole body: the row check looks at every value it keeps, and
    # NaN, Infinity and 1e400 are read so that they become row errors naming the value.
    return json_loads(raw, max_depth=None, allow_nan=True)


def _line(line: bytes) -> Any:
    try:
        return _loads(line)
    except JSONProblem as exc:
        return Unreadable(f"this line is {exc.message}")


def _tags_cell(text: str) -> Any:
    try:
        return _loads(text)
    except JSONProblem as exc:
        return Unreadable(f"tags is {exc.message}", "tags")
