"""Reading a CSV that a client sent: every CSV import (observations, incidents, freeze levels) reads its
rows here, so a file the csv module cannot read is one 400 naming the field, never a `_csv.Error` 500.

Lines end at LF or CRLF. A carriage return alone inside a quoted field is text; outside quotes the csv
module cannot tell whether it ends a line (old Mac files) or is stray, so it is refused with the line,
rather than guessed at: a guess would split or merge rows that then get written.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from core.errors import ApplicationError

MSG_UNREADABLE = "The CSV cannot be read at line {line}: {reason}."
REASON_BARE_CR = (
    "a carriage return (CR) outside quotes that does not end the line; end lines with LF or CRLF, "
    "or quote the field"
)


def csv_records(text: str, *, field: str) -> list[dict[str, Any]]:
    """The rows of `text` as csv.DictReader gives them (keyed by the header row; cells beyond it in a
    list under the key None), all read before any is used, so a refusal part-way writes nothing."""
    reader = csv.DictReader(io.StringIO(text))
    try:
        return list(reader)
    except csv.Error as exc:
        reason = REASON_BARE_CR if "new-line character" in str(exc) else str(exc)
        # line_num counts the lines read whole; the one that failed is the next.
        raise ApplicationError(
            MSG_UNREADABLE.format(line=reader.line_num + 1, reason=reason), status=400, field=field
        ) from exc
