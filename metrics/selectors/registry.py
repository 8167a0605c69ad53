from __future__ import annotations

from datetime import date, datetime

from django.db.models import Case, Count, OuterRef, QuerySet, Subquery, When

from core.errors import ApplicationError
from core.replica import read_connection
from metrics.models import MetricDefinition, Observation
from metrics.refs import MetricRefError, metric_ref_parse
from metrics.rollups.sketch import Sketch, percentile_cont


def definition_resolve(
    ref: str, *, field: str = "metric", in_path: bool = False, require_active: bool = False
) -> MetricDefinition:
    """`key` → its active version; `key@N` → that version. ApplicationError naming `field` otherwise.

    Where the reference came from decides the status of one that names no row: a request's input (a
    body field or query parameter, the default) is a 400 naming `field`; a URL path (`in_path=True`)
    is a 404, like any other path that names nothing."""
    missing = 404 if in_path else 400
    if not ref:
        raise ApplicationError(f"{field} is required: 'key' or 'key@N'.", status=400, field=field)
    try:
        key, version = metric_ref_parse(ref)
    except MetricRefError as exc:
        raise ApplicationError(exc.message, status=missing, field=field) from None
    queryset = MetricDefinition.objects.filter(key=key)
    if version is not None:
        definition = queryset.filter(version=version).first()
    else:
        definition = queryset.filter(status=MetricDefinition.Status.ACTIVE).first()
        if definition is None and queryset.exists():
            raise ApplicationError(
                f"Metric '{key}' has no active version; name one as '{key}@N'.", status=400, field=field
            )
    if definition is None:
        raise ApplicationError(f"Unknown metric '{ref}'.", status=missing, field=field)
    if require_active and definition.status != MetricDefinition.Status.ACTIVE:
        raise ApplicationError(f"{definition.ref} is {definition.status}.", status=400, field=field)
    return definition


def definition_get(key: str) -> MetricDefinition:
    """The active version of `key`, else its newest version."""
    definition = (
        MetricDefinition.objects.filter(key=key)
        .order_by(Case(When(status=MetricDefinition.Status.ACTIVE, then=0), default=1), "-version")
        .first()
    )
    if definition is None:
        raise ApplicationError(f"Unknown metric '{key}'.", status=404, field="key")
    return definition


def definition_versions(key: str) -> QuerySet[MetricDefinition]:
    return MetricDefinition.objects.filter(key=key).order_by("-version")


def definitions_latest(
    *, owner_team: str | None = None, status: str | None = None
) -> QuerySet[MetricDefinition]:
    """One row per key: the active version, or the newest when none is active; with counts."""
    newest_first = MetricDefinition.objects.filter(key=OuterRef("key")).order_by(
        Case(When(status=MetricDefinition.Status.ACTIVE, then=0), default=1), "-version"
    )
    queryset = MetricDefinition.objects.filter(pk=Subquery(newest_first.values("pk")[:1])).annotate(
        version_count=Subquery(
            MetricDefinition.objects.filter(key=OuterRef("key"))
            .values("key")
            .annotate(n=Count("pk"))
            .values("n")[:1]
        )
    )
    if owner_team:
        queryset = queryset.filter(owner_team=owner_team)
    if status:
        queryset = queryset.filter(status=status)
    return queryset.order_by("key")


def observations_list() -> QuerySet[Observation]:
    # Prefetched, not joined: a join ran before the sort for the page, over every matching row.
    return Observation.objects.prefetch_related("definition", "system", "workload").order_by(
        # Newest first; the rest of the natural key makes the order total, so pages never overlap.
        "-observed_at",
        "definition_id",
        "system_id",
        "workload_id",
        "run_id",
    )


SERIES_SQL = """
SELECT w.key, s.key, r.day::timestamp AT TIME ZONE 'UTC', r.n, r.median, r.total, r.m2, r.min, r.max, r.zeros,
       CASE WHEN r.median IS NULL THEN r.bins END, CASE WHEN r.median IS NULL THEN r.negative_bins END
FROM metrics_observationrollup r
JOIN metrics_system s ON s.id = r.system_id
JOIN metrics_workload w ON w.id = r.workload_id
WHERE r.definition_id = %s {window}
ORDER BY w.key, s.key, r.day
"""


def series_daily(
    definition: MetricDefinition, *, since: date | None = None, until: date | None = None
) -> dict[str, dict[str, list[tuple[datetime, float, int]]]]:
    """{workload: {system: [(day's midnight UTC, median, n), …]}} for charts, UTC days since..until
    (exclusive); one query.

    Read from the day rollups alone (metrics.rollups): each day's exact median where the rollup has one
    (a recompute, or the nightly median recompute), else its sketch's, within the sketch's accuracy (a
    day a batch was added to since)."""
    window = ""
    params: list[int | date] = [definition.pk]
    if since:
        window += " AND r.day >= %s"
        params.append(since)
    if until:
        window += " AND r.day < %s"
        params.append(until)
    series: dict[str, dict[str, list[tuple[datetime, float, int]]]] = {}
    with read_connection().cursor() as cursor:
        cursor.execute(SERIES_SQL.format(window=window), params)
        for (
            workload,
            system,
            day,
            n,
            median,
            total,
            m2,
            low,
            high,
            zeros,
            bins,
            negative,
        ) in cursor.fetchall():
            if median is None:  # a batch was added since its last recompute: read it from its sketch
                sketch = Sketch()
                sketch.moments.add(n, total, m2, low, high)
                sketch.add_bins(bins, negative, zeros)
                median = percentile_cont(sketch, 0.5)
            series.setdefault(workload, {}).setdefault(system, []).append((day, median, n))
    return series
