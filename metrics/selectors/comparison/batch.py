"""Many comparisons' samples in one read: the gate page judges every criterion's shadow version at once.

Each request names a definition, an optional workload and an optional window start; both systems are
the same for all (a program's baseline and candidate). One query returns, per request and system,
the mean and the values; the sides are built exactly as `sides_fetch` builds them. It goes through
Django's cursor (text transfer, unlike `sides_fetch`'s binary one) so it is counted like any other
page query.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.replica import read_connection
from metrics.models import System
from metrics.rollups.read import Window, sketches_over_threshold
from metrics.selectors.comparison.sql import Side, _side, sketch_side

BATCH_SQL = """
WITH wanted (idx, definition_id, workload_id, since) AS (VALUES {rows})
SELECT wanted.idx, o.system_id, avg(o.value), array_agg(o.value)
FROM wanted
JOIN metrics_observation o
  ON o.definition_id = wanted.definition_id
 AND o.system_id IN (%s, %s)
 AND (wanted.workload_id IS NULL OR o.workload_id = wanted.workload_id)
 AND (wanted.since IS NULL OR o.observed_at >= wanted.since)
GROUP BY wanted.idx, o.system_id
"""
ROW = "(%s::integer, %s::bigint, %s::bigint, %s::timestamptz)"


@dataclass(frozen=True)
class SidesRequest:
    definition_id: int
    workload_id: int | None = None
    since: datetime | None = None


def sides_fetch_many(
    requests: list[SidesRequest], *, baseline: System, candidate: System
) -> list[tuple[Side, Side]]:
    """Both sides of every request, in the requests' order, in at most three queries whatever their
    number (none for no requests): the rollups' counts, the sketches of the windows over the rollup
    threshold (metrics.rollups.read), and the exact samples of the others."""
    if not requests:
        return []
    large = sketches_over_threshold(
        [Window(r.definition_id, r.workload_id, r.since) for r in requests],
        baseline_id=baseline.pk,
        candidate_id=candidate.pk,
    )
    exact = [(i, r) for i, r in enumerate(requests) if i not in large]
    rows = _exact_rows(exact, baseline=baseline, candidate=candidate) if exact else {}
    return [
        (sketch_side(baseline, large[i][0]), sketch_side(candidate, large[i][1]))
        if i in large
        else (_side(baseline, rows.get((i, baseline.pk))), _side(candidate, rows.get((i, candidate.pk))))
        for i in range(len(requests))
    ]


def _exact_rows(exact, *, baseline: System, candidate: System) -> dict[tuple[int, int], tuple]:
    params: list = []
    for index, request in exact:
        params += [index, request.definition_id, request.workload_id, request.since]
    params += [baseline.pk, candidate.pk]
    rows: dict[tuple[int, int], tuple[float, list[float]]] = {}
    with read_connection().cursor() as cursor:
        cursor.execute(BATCH_SQL.format(rows=", ".join([ROW] * len(exact))), params)
        for index, system_id, mean, values in cursor.fetchall():
            rows[(index, system_id)] = (mean, values)
    return rows
