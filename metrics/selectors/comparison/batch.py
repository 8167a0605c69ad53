"""Many comparisons' samples in one read: the gate page judges every criterion's shadow version at once.

A request with tag filters or a group-by key (a sliced criterion) is read from the rows, never the
rollups, in one more query for all of them (SLICED_BATCH_SQL, the batch form of slices.SLICED_SQL);
its answer is a SlicedSides instead of a pair.

Each request names a definition, an optional workload and an optional window start; both systems are
the same for all (a program's baseline and candidate). One query returns, per request and system,
the mean and the values; the sides are built exactly as `sides_fetch` builds them, by the same rule
(sql.sides_of_windows: rollups over the threshold, else rows). It goes through
Django's cursor (text transfer, unlike `sides_fetch`'s binary one) so it is counted like any other
page query.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import orjson
from django.conf import settings

from core.replica import read_connection
from metrics.models import System
from metrics.rollups.read import Window
from metrics.selectors.comparison.slices import TAG_MATCH, SlicedRow, SlicedSides, sliced_sides_of_rows
from metrics.selectors.comparison.sql import Side, _side, sides_of_windows

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

SLICED_BATCH_SQL = (
    """
WITH wanted (idx, definition_id, workload_id, since, tags, group_by) AS (VALUES {rows})
SELECT r.idx, r.system_id, w.key, w.size, r.grp, max(r.total), array_agg(r.value)
FROM (
    SELECT wanted.idx, o.system_id, o.workload_id, o.value,
           CASE WHEN jsonb_typeof(o.tags -> wanted.group_by) = 'string'
                THEN o.tags ->> wanted.group_by END AS grp,
           row_number() OVER (PARTITION BY wanted.idx, o.system_id ORDER BY o.observed_at DESC) AS newest,
           count(*) OVER (PARTITION BY wanted.idx, o.system_id) AS total
    FROM wanted
    JOIN metrics_observation o
      ON o.definition_id = wanted.definition_id
     AND o.system_id IN (%s, %s)
     AND (wanted.workload_id IS NULL OR o.workload_id = wanted.workload_id)
     AND (wanted.since IS NULL OR o.observed_at >= wanted.since)
     AND """
    + TAG_MATCH.format(filters="wanted.tags", row="o")
    + """
) r
JOIN metrics_workload w ON w.id = r.workload_id
WHERE r.newest <= %s
GROUP BY 1, 2, 3, 4, 5
"""
)
SLICED_ROW = "(%s::integer, %s::bigint, %s::bigint, %s::timestamptz, %s::jsonb, %s::text)"


@dataclass(frozen=True)
class SidesRequest:
    definition_id: int
    workload_id: int | None = None
    since: datetime | None = None
    tag_filters: dict[str, list[str]] | None = None
    group_by: str | None = None

    @property
    def sliced(self) -> bool:
        return bool(self.tag_filters or self.group_by)


def sides_fetch_many(
    requests: list[SidesRequest], *, baseline: System, candidate: System
) -> list[tuple[Side, Side] | SlicedSides]:
    """Both sides of every request, in the requests' order, in at most three queries whatever their
    number (none for no requests): the rollups' counts, the sketches of the windows over the rollup
    threshold (metrics.rollups.read), and the exact samples of the others; sliced requests add one."""
    if not requests:
        return []
    plain = [(i, r) for i, r in enumerate(requests) if not r.sliced]

    def exact_sides(positions: list[int]) -> dict[int, tuple[Side, Side]]:
        rows = _exact_rows([plain[j] for j in positions], baseline=baseline, candidate=candidate)
        return {
            j: (_side(baseline, rows.get((i, baseline.pk))), _side(candidate, rows.get((i, candidate.pk))))
            for j, (i, _) in ((j, plain[j]) for j in positions)
        }

    windows = [Window(r.definition_id, r.workload_id, r.since) for _, r in plain]
    found = sides_of_windows(windows, baseline=baseline, candidate=candidate, exact_sides=exact_sides)
    answers: dict[int, tuple[Side, Side] | SlicedSides] = {
        i: sides for (i, _), sides in zip(plain, found, strict=True)
    }
    sliced = [(i, r) for i, r in enumerate(requests) if r.sliced]
    answers.update(_sliced(sliced, baseline=baseline, candidate=candidate) if sliced else {})
    return [answers[i] for i in range(len(requests))]


def _sliced(
    sliced: list[tuple[int, SidesRequest]], *, baseline: System, candidate: System
) -> dict[int, SlicedSides]:
    cap = settings.ROLLUP_THRESHOLD
    params: list[int | datetime | str | None] = []
    for index, r in sliced:
        params += [index, r.definition_id, r.workload_id, r.since]
        params += [orjson.dumps(r.tag_filters or {}).decode(), r.group_by or None]
    params += [baseline.pk, candidate.pk, cap]
    per_request: dict[int, list[SlicedRow]] = {index: [] for index, _ in sliced}
    with read_connection().cursor() as cursor:
        cursor.execute(SLICED_BATCH_SQL.format(rows=", ".join([SLICED_ROW] * len(sliced))), params)
        for index, *row in cursor.fetchall():
            per_request[index].append(row)
    groups = {index: r.group_by for index, r in sliced}
    return {
        index: sliced_sides_of_rows(
            rows, baseline=baseline, candidate=candidate, group_by=groups[index], cap=cap
        )
        for index, rows in per_request.items()
    }


def _exact_rows(
    exact: list[tuple[int, SidesRequest]], *, baseline: System, candidate: System
) -> dict[tuple[int, int], tuple[float, list[float]]]:
    params: list[int | datetime | None] = []
    for index, request in exact:
        params += [index, request.definition_id, request.workload_id, request.since]
    params += [baseline.pk, candidate.pk]
    rows: dict[tuple[int, int], tuple[float, list[float]]] = {}
    with read_connection().cursor() as cursor:
        cursor.execute(BATCH_SQL.format(rows=", ".join([ROW] * len(exact))), params)
        for index, system_id, mean, values in cursor.fetchall():
            rows[(index, system_id)] = (mean, values)
    return rows
