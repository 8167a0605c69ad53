"""The read of a sliced comparison: tag filters, an optional group-by tag, and the pooled workloads.

The day rollups carry no tags, so a tag-filtered or grouped comparison always reads exact rows, in
one query for both sides and every group: rows grouped by (system, workload, group value), each
group's values as an array. The pooled sides are every group's arrays together (rows without the
group tag count in the pooled comparison only). Tags are not in any index: the query reads the rows
of the window (the time index narrows it to the window's months and days, then each row's tags are
tested).

Bounded: each side keeps at most settings.ROLLUP_THRESHOLD rows, the newest (ordered by
observed_at); a side that had more says so in `capped`, and the comparison carries a warning. The
cap is the rollup threshold because that is where an unfiltered comparison stops reading rows too.

A side's mean is math.fsum of its values over n, so it does not depend on the order rows arrive in:
a group's numbers equal those of the same filter asked for on its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import orjson
from django.conf import settings

from core.replica import read_connection
from metrics.models import MetricDefinition, System, Workload
from metrics.selectors.comparison.sql import Side, _side, window_filters

# A row matches a filter {key: [values]} when every key's tag is text and one of the values. The same
# clause serves the batch read (batch.py), where each request carries its own filter.
TAG_MATCH = """NOT EXISTS (
    SELECT 1 FROM jsonb_each({filters}) AS wanted_tag (key, vals)
    WHERE NOT coalesce(jsonb_typeof({row}.tags -> wanted_tag.key) = 'string'
                       AND wanted_tag.vals @> ({row}.tags -> wanted_tag.key), false))"""

SLICED_SQL = """
SELECT o.system_id, w.key, w.size, o.grp, max(o.total), array_agg(o.value)
FROM (
    SELECT o.system_id, o.workload_id, o.value,
           CASE WHEN jsonb_typeof(o.tags -> %(group)s) = 'string' THEN o.tags ->> %(group)s END AS grp,
           row_number() OVER (PARTITION BY o.system_id ORDER BY o.observed_at DESC) AS newest,
           count(*) OVER (PARTITION BY o.system_id) AS total
    FROM metrics_observation o
    WHERE o.definition_id = %(definition)s AND o.system_id IN (%(baseline)s, %(candidate)s) {filters}
) o
JOIN metrics_workload w ON w.id = o.workload_id
WHERE o.newest <= %(cap)s
GROUP BY 1, 2, 3, 4
"""

# Which workloads an unsliced comparison without a workload pools: for each workload and side, one
# probe on the (definition, system, workload) prefix of the primary key that stops at its first row.
# Written so that no plan can read the metric's rows instead: EXISTS became a hash semi-join over every
# row (226 ms at 1M rows), and a bare LIMIT 1 a sequential scan, which for a workload without rows
# read them all (0.8 s at 10M). ORDER BY run_id, the key's next column, makes the index the only
# cheap way to the first row (0.5 ms).
POOLED_WORKLOADS_SQL = """
SELECT w.key, w.size FROM metrics_workload w
CROSS JOIN LATERAL (
    SELECT 1 FROM unnest(ARRAY[%(baseline)s, %(candidate)s]::bigint[]) AS side (system_id)
    CROSS JOIN LATERAL (
        SELECT 1 FROM metrics_observation o
        WHERE o.definition_id = %(definition)s AND o.system_id = side.system_id
          AND o.workload_id = w.id {filters}
        ORDER BY o.run_id
        LIMIT 1
    ) AS probe
    LIMIT 1
) AS found
ORDER BY w.key
"""
# Without sorting, only the primary key can give a probe its order. Statistics taken when the month's
# partition held a row (early in the month, before autovacuum analyses it again) made reading the
# metric's month through the time index and sorting it look as cheap: a million rows read for one
# comparison over 200,000 (tests/metrics/test_comparison_slicing.py). The setting lives for the probe
# only: set, used and restored in one round trip (the simple query protocol runs the three statements
# together; TO DEFAULT undoes it inside a caller's transaction, where SET LOCAL would last to its end).
UNSORTED = "SET LOCAL enable_sort = off; {probe}; SET LOCAL enable_sort TO DEFAULT"


@dataclass
class SlicedSides:
    pooled: tuple[Side, Side]
    groups: dict[str, tuple[Side, Side]] = field(default_factory=dict)
    workloads: list[tuple[str, str]] = field(default_factory=list)  # (key, size) of the pooled rows
    capped: dict[str, int] = field(default_factory=dict)  # system key → rows in the window, over the cap


def _side_of(system: System, arrays: list[list[float]]) -> Side:
    values = [v for array in arrays for v in array]
    if not values:
        return _side(system, None)
    return _side(system, (math.fsum(values) / len(values), values))


def sliced_sides_fetch(
    *,
    definition: MetricDefinition,
    baseline: System,
    candidate: System,
    workload: Workload | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    tag_filters: dict[str, list[str]] | None = None,
    group_by: str | None = None,
    cap: int | None = None,
) -> SlicedSides:
    """Both sides, pooled and per group value, in one query."""
    cap = settings.ROLLUP_THRESHOLD if cap is None else cap
    filters, params = window_filters(workload, since, until, alias="o")
    if tag_filters:
        filters += " AND " + TAG_MATCH.format(filters="%(tags)s::jsonb", row="o")
        params["tags"] = orjson.dumps(tag_filters).decode()
    params.update(
        definition=definition.pk,
        baseline=baseline.pk,
        candidate=candidate.pk,
        group=group_by or "",
        cap=cap,
    )
    with read_connection().cursor() as cursor:
        cursor.execute(SLICED_SQL.format(filters=filters), params)
        rows = cursor.fetchall()
    return sliced_sides_of_rows(rows, baseline=baseline, candidate=candidate, group_by=group_by, cap=cap)


# As SLICED_SQL returns them: system id, workload key, size, group value, rows before the cap, values.
SlicedRow = tuple[int, str, str, str | None, int, list[float]]


def sliced_sides_of_rows(
    rows: Sequence[SlicedRow], *, baseline: System, candidate: System, group_by: str | None, cap: int
) -> SlicedSides:
    """SlicedSides from (system id, workload key, size, group value, rows before the cap, values)
    rows, as SLICED_SQL (and the batch read, per request) returns them."""
    systems = {baseline.pk: baseline, candidate.pk: candidate}
    pooled: dict[int, list[list[float]]] = {baseline.pk: [], candidate.pk: []}
    grouped: dict[str, dict[int, list[list[float]]]] = {}
    workloads: set[tuple[str, str]] = set()
    capped: dict[str, int] = {}
    for system_id, workload_key, size, group, total, values in rows:
        pooled[system_id].append(values)
        workloads.add((workload_key, size))
        if total > cap:
            capped[systems[system_id].key] = total
        if group_by and group is not None:
            grouped.setdefault(group, {baseline.pk: [], candidate.pk: []})[system_id].append(values)
    return SlicedSides(
        pooled=(_side_of(baseline, pooled[baseline.pk]), _side_of(candidate, pooled[candidate.pk])),
        groups={
            group: (_side_of(baseline, arrays[baseline.pk]), _side_of(candidate, arrays[candidate.pk]))
            for group, arrays in grouped.items()
        },
        workloads=sorted(workloads),
        capped=capped,
    )


def pooled_workloads(
    *,
    definition: MetricDefinition,
    baseline: System,
    candidate: System,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[tuple[str, str]]:
    """(key, size) of every workload with rows in the window on either side."""
    filters, params = window_filters(None, since, until, alias="o")
    params.update(definition=definition.pk, baseline=baseline.pk, candidate=candidate.pk)
    with read_connection().cursor() as cursor:
        cursor.execute(UNSORTED.format(probe=POOLED_WORKLOADS_SQL.format(filters=filters)), params)
        # The probe's answer is the next to last: pghistory may put a statement of its own first,
        # and then leaves the cursor on the last answer.
        cursor.set_result(-2)
        return list(cursor.fetchall())


def size_warning(workloads: list[tuple[str, str]]) -> str | None:
    """Pooling workloads of different sizes mixes different scales: say which."""
    sizes: dict[str, list[str]] = {}
    for key, size in workloads:
        sizes.setdefault(size, []).append(key)
    if len(sizes) < 2:
        return None
    named = "; ".join(f"{size}: {', '.join(keys)}" for size, keys in sorted(sizes.items()))
    return (
        f"This comparison pools workloads of different sizes ({named}); a shift in the mix between the "
        "systems can move the result. Pick one workload to compare like with like."
    )
