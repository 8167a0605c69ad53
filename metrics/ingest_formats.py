"""Decoding observation bodies: JSON {"observations": [...]}, NDJSON and CSV (API and import command)."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import orjson

from core.errors import ApplicationError


def decode_rows(body: bytes, content_type: str) -> list:
    """Rows from a JSON body {"observations": [...]}, NDJSON (one object per line) or CSV."""
    kind = content_type.split(";")[0].strip().lower()
    if kind in ("application/x-ndjson", "application/ndjson", "application/jsonl"):
        rows = []
        for line in body.splitlines():
            if line.strip():
                rows.append(_loads(line, field="body"))
        return rows
    if kind in ("text/csv", "application/csv"):
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ApplicationError("The CSV is not UTF-8.", status=400, field="body") from exc
        rows = []
        for row in csv.DictReader(io.StringIO(text)):
            if row.get("tags"):
                # Left as text when not JSON: the row check then reports "tags must be an object".
                with contextlib.suppress(ValueError):
                    row["tags"] = json.loads(row["tags"])
            rows.append(row)
        return rows
    if kind not in ("application/json", ""):
        raise ApplicationError(
            f"Unsupported content type '{kind}': send application/json, application/x-ndjson or text/csv.",
            status=415,
            field="Content-Type",
        )
    document = _loads(body, field="body")
    if not isinstance(document, dict) or "observations" not in document:
        raise ApplicationError('The body must be {"observations": [...]}.', status=400, field="observations")
    return document["observations"]


def _loads(raw: bytes, *, field: str):
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        # The standard parser accepts NaN, Infinity and 1e400, so such values become row errors.
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApplicationError(f"The body is not valid JSON: {exc}", status=400, field=field) from exc
