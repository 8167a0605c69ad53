"""DRF's JSON answers, written by orjson when the answer holds nothing but JSON's own types.

Writing a page of 50 observations with DRF's JSONRenderer (the standard library's encoder) took about a
tenth of the observations list's worker time; orjson writes the same page in a twentieth of that. The
answer stays DRF's: compact separators, UTF-8, U+2028 and U+2029 escaped. orjson is told to hand back
datetimes, dataclasses and subclasses of str, int, dict and list (lazy translations, a serializer's
ReturnDict) instead of writing them its own way; with no `default` to take them it refuses, and DRF's
renderer writes that answer, as it does one asked for indented. Two differences remain: a float in
exponent form may be written otherwise (0.00001, where the standard library writes 1e-05), the same
number to every JSON reader; and a NaN or infinity, which DRF's renderer refuses (a 500), is written
as null. Neither reaches an answer today: stored values are finite (a check constraint), and the
statistics write None where they have no number.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, cast

import orjson
from rest_framework.renderers import BaseRenderer, JSONRenderer

PLAIN_ONLY = (
    orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
)
# What DRF's renderer escapes, since they end a line in JavaScript source.
LINE_SEPARATORS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


class FastJSONRenderer(JSONRenderer):
    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        # DRF's renderer writes bytes; its stub leaves the answer Any.
        if data is None or self.get_indent(accepted_media_type or "", renderer_context or {}):
            return cast(bytes, super().render(data, accepted_media_type, renderer_context))
        try:
            text = orjson.dumps(data, option=PLAIN_ONLY)
        except TypeError:  # a type only DRF's encoder knows
            return cast(bytes, super().render(data, accepted_media_type, renderer_context))
        for raw, escaped in LINE_SEPARATORS:
            if raw in text:
                text = text.replace(raw, escaped)
        return text


class CSVRenderer(BaseRenderer):
    """A list answer as CSV (`?format=csv` or `Accept: text/csv`): a header row, then one row per item,
    its cells as the JSON answer has them — numbers as Python writes them (the shortest text that
    reads back to the same float), objects and lists as JSON, null as an empty cell. A paginated
    answer writes its `results`, a single object (OPTIONS' description) one row; the view adds the next page as a `Link` header. The columns are the
    view's `csv_columns`, so an empty page still says what its columns are. An error is written as
    rows of detail, field and message (the API's one error shape)."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        context = renderer_context or {}
        response = context.get("response")
        if response is not None and response.status_code >= 400:
            columns: list[str] = ["detail", "field", "message"]
            rows = _error_rows(data if isinstance(data, Mapping) else {"detail": data})
        elif isinstance(data, Mapping) and "results" not in data:
            # One object (OPTIONS answers the view's description) is one row of its own fields.
            rows, columns = [dict(data)], list(data)
        else:
            rows = data["results"] if isinstance(data, Mapping) else data or []
            columns = list(getattr(context.get("view"), "csv_columns", None) or (rows[0] if rows else []))
        return b"".join(csv_lines(columns, [rows]))


def csv_lines(columns: Sequence[str], chunks: Iterable[Iterable[Mapping[str, Any]]]) -> Iterator[bytes]:
    """The header row, then each chunk of rows as one piece of UTF-8 CSV, its cells as `csv_cell`
    writes them: what the list's CSV pages and the streamed exports (which yield a piece per chunk
    read from the database, so memory holds one chunk) both write."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")  # RFC 4180 line ends
    writer.writerow(columns)
    for rows in chunks:
        writer.writerows([csv_cell(row.get(column)) for column in columns] for row in rows)
        yield buffer.getvalue().encode(CSVRenderer.charset)
        buffer.seek(0)
        buffer.truncate()
    if buffer.tell():  # no chunk at all: the header alone
        yield buffer.getvalue().encode(CSVRenderer.charset)


def csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return orjson.dumps(value).decode()
    return str(value)


def _error_rows(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    errors = data.get("errors") or [{}]
    return [{"detail": data.get("detail"), **error} for error in errors]


# Headers of an answer that carries a secret shown once (a new API token, a webhook signing secret): no
# cache on the way, nor the browser's, may keep it (RFC 9111, no-store).
SECRET_HEADERS = {"Cache-Control": "no-store"}
