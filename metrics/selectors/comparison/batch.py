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

from django.db import connection

from metrics.models import System
from metrics.selectors.comparison.sql import Side, _side

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
    """Both sides of every request, in the requests' order, in one query (none for no requests)."""
    if not requests:
        return []
    params: list = []
    for index, request in enumerate(requests):
        params += [index, request.definition_id, request.workload_id, request.since]
    params += [baseline.pk, candidate.pk]
    rows: dict[tuple[int, int], tuple[float, list[float]]] = {}
    with connection.cursor() as cursor:
        cursor.execute(BATCH_SQL.format(rows=", ".join([ROW] * len(requests))), params)
        for index, system_id, mean, values in cursor.fetchall():
            rows[(index, system_id)] = (mean, values)
    return [
        (_side(baseline, rows.get((i, baseline.pk))), _side(candidate, rows.get((i, candidate.pk))))
        for i in range(len(requests))
    ]
