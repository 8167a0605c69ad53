"""OTLP ingest with partial success: the good points are stored, the bad ones counted and named.

Batch ingest is all-or-nothing; OTLP asks the receiver to keep what it can. So the points go through
the one ingest service (metrics.services.ingest) as a batch, and when it refuses rows, it is called
again with the rows it did not name: every rule stays there, and nothing is written here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.errors import ApplicationError
from core.telemetry.instruments import INGEST_ROWS
from metrics.otlp import Point, Rejected
from metrics.services.ingest import IngestResult, observations_ingest

# How many problems the error_message names before it counts the rest.
MESSAGE_PROBLEMS = 5


@dataclass
class OtlpResult:
    accepted: int
    rejected: list[Rejected] = field(default_factory=list)
    batch: IngestResult | None = None

    @property
    def error_message(self) -> str:
        if not self.rejected:
            return ""
        named = [f"{problem.label}: {problem.message}" for problem in self.rejected[:MESSAGE_PROBLEMS]]
        more = len(self.rejected) - len(named)
        return " ".join(named) + (f" (and {more} more)" if more else "")


def observations_ingest_otlp(
    *, points: list[Point], rejected: list[Rejected], submitted_by, source: str
) -> OtlpResult:
    """Store the points that pass the ingest rules; `rejected` are those that could not become rows."""
    rejected = list(rejected)
    # Points refused before they became rows; the rows' own verdicts are counted by observations_ingest.
    INGEST_ROWS.labels(outcome="rejected").inc(len(rejected))
    rows = [point.row for point in points]
    if not rows:
        return OtlpResult(accepted=0, rejected=rejected)
    try:
        batch = observations_ingest(rows=rows, submitted_by=submitted_by, source=source)
        return OtlpResult(accepted=len(rows), rejected=rejected, batch=batch)
    except ApplicationError as exc:
        if exc.status != 422 or not exc.errors:
            raise
        refused = _first_error_per_row(exc.errors)
    rejected.extend(Rejected(points[index].label, message) for index, message in sorted(refused.items()))
    good = [row for index, row in enumerate(rows) if index not in refused]
    if not good:
        return OtlpResult(accepted=0, rejected=rejected)
    # The rows it did not name passed every rule; a 422 now (a definition changed in between) is the
    # client's to retry.
    batch = observations_ingest(rows=good, submitted_by=submitted_by, source=source)
    return OtlpResult(accepted=len(good), rejected=rejected, batch=batch)


def _first_error_per_row(errors: list[dict]) -> dict[int, str]:
    refused: dict[int, str] = {}
    for error in errors:
        index = error.get("index")
        if isinstance(index, int) and index not in refused:
            refused[index] = error["message"]
    return refused
