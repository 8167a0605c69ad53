"""Whether a comparison pools points of different sampling, and the warning that says so.

Every row of a side counts as one observation of the definition's sampling (one request, step or run,
or one interval). Pushed rows are taken as the definition says. A Prometheus pull source declares
what one of its points is (PullSource.point_kind); when that does not fit the definition's sampling
(metrics.models.POINT_KIND_SAMPLINGS) — a source from before the declaration, or a new version of the
metric sampled otherwise — its rows are aggregates among samples (or the reverse), and the
comparison says how many there are on each side.

Cost: one query on the (few) pull sources of the metric and the two systems. Only when one of them
disagrees does a second query count that side's rows by source over the comparison's window.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import orjson

from core.replica import read_connection
from metrics.models import MetricDefinition, PointKind, PullSource, System, Workload, point_kind_fits
from metrics.pulled_rows import INGEST_SOURCE, run_id_prefix
from metrics.selectors.comparison.slices import TAG_MATCH
from metrics.selectors.comparison.sql import window_filters

COUNT_SQL = """
SELECT o.system_id, count(*),
       count(*) FILTER (WHERE o.source = %(pulled)s AND o.run_id LIKE ANY(%(prefixes)s))
FROM metrics_observation o
WHERE o.definition_id = %(definition)s AND o.system_id IN (%(baseline)s, %(candidate)s) {filters}
GROUP BY o.system_id
"""

OTHER_KIND = {PointKind.SAMPLE: "aggregates over an interval", PointKind.AGGREGATE: "single samples"}


@dataclass(frozen=True)
class SamplingCheck:
    mixed: bool
    warnings: list[str]


def sampling_check(
    *,
    definition: MetricDefinition,
    baseline: System,
    candidate: System,
    workload: Workload | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    tag_filters: dict[str, list[str]] | None = None,
) -> SamplingCheck:
    """`mixed` when a side's rows, or the two sides, are of different point kinds; a warning per side."""
    unfit = [
        source
        for source in PullSource.objects.filter(
            definition__key=definition.key, system__in=[baseline, candidate]
        ).only("pk", "system_id", "point_kind")
        if not point_kind_fits(source.point_kind, definition.sampling)
    ]
    if not unfit:
        return SamplingCheck(False, [])
    counts = _counts(definition, baseline, candidate, unfit, workload, since, until, tag_filters or {})
    # What a fitting row is: the definition's own kind (pushed, or pulled by a source that fits).
    own = (
        PointKind.AGGREGATE if point_kind_fits(PointKind.AGGREGATE, definition.sampling) else PointKind.SAMPLE
    )
    warnings, kinds = [], {}
    for system in (baseline, candidate):
        total, foreign = counts.get(system.pk, (0, 0))
        kinds[system.pk] = {kind for kind, n in ((own, total - foreign), ("other", foreign)) if n}
        if not foreign:
            continue
        sources = ", ".join(str(s.pk) for s in unfit if s.system_id == system.pk)
        what = (
            f"{foreign:,} of {total:,} rows on {system.key} are {OTHER_KIND[own]} "
            f"(Prometheus pull source {sources})"
        )
        counted = (
            f"as if each were one {definition.sampling.removeprefix('per_')}"
            if own == PointKind.SAMPLE
            else "as if each sample were one interval's value"
        )
        warnings.append(
            f"{what}, pooled with its {total - foreign:,} other rows {counted}."
            if foreign < total
            else f"{what}: every row on that side is counted {counted}."
        )
    base, cand = kinds[baseline.pk], kinds[candidate.pk]
    mixed = len(base) > 1 or len(cand) > 1 or bool(base and cand and base != cand)
    if mixed:
        warnings.append(
            f"{definition.ref} is sampled {definition.sampling}: these numbers pool points of different "
            "sampling. Declare the source's point_kind, or compare a window without those rows."
        )
    return SamplingCheck(mixed, warnings)


def _counts(
    definition: MetricDefinition,
    baseline: System,
    candidate: System,
    unfit: list[PullSource],
    workload: Workload | None,
    since: datetime | None,
    until: datetime | None,
    tag_filters: dict[str, list[str]],
) -> dict[int, tuple[int, int]]:
    """system id → (rows in the window, rows of the unfit sources among them)."""
    filters, params = window_filters(workload, since, until, alias="o")
    if tag_filters:
        filters += " AND " + TAG_MATCH.format(filters="%(tags)s::jsonb", row="o")
        params["tags"] = orjson.dumps(tag_filters).decode()
    params.update(
        definition=definition.pk,
        baseline=baseline.pk,
        candidate=candidate.pk,
        pulled=INGEST_SOURCE,
        prefixes=[f"{run_id_prefix(source.pk)}%" for source in unfit],
    )
    with read_connection().cursor() as cursor:
        cursor.execute(COUNT_SQL.format(filters=filters), params)
        return {system_id: (total, foreign) for system_id, total, foreign in cursor.fetchall()}
