"""The stored series as Prometheus sees them, for the query API Grafana reads (program/api/prometheus.py).

One series is one program's side (baseline or candidate system) of one active metric, as one
statistic: `rebuild_tracker_observation{metric, program, side, system, stat, unit}`, plus `workload`
where the selector names one (without it, every workload pooled, as a comparison pools them). The
series that exist are every active metric on every program the user may read (program.policies): the
registry's view, not the rows', so a metric a program has no rows of yet is listed and returns no
points. A private program the user may not read is no series at all, as a program that does not exist.

Listing series and label values is three queries whatever their number: the active definitions, the
readable programs with their systems, and the user's memberships (none for a platform admin), plus one
for the workloads a selector names. A range read is, per (program, metric, workload) it touches, one
query for the comparison's rows-or-rollups rule and one per statistic (metrics.public.window_series,
the comparison chart's own selector).

Each step `t` of a range gets the statistic of the whole bucket holding `t`: an hour for a range of at
most metrics.public.MAX_HOURLY (3 days), else a UTC day, the chart's rule; a side the comparison reads
from the day rollups (over settings.ROLLUP_THRESHOLD rows) is a UTC day whatever the range. The
result's `bucket` and `read` labels say which."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.contrib.auth.models import AnonymousUser, User

from metrics.models import MetricDefinition, Workload
from metrics.public import MAX_HOURLY, window_series
from program import policies
from program.models import Program
from program.promql import METRIC_NAME, PromQLError, Selector

LABELS = frozenset({"metric", "program", "side", "system", "stat", "unit", "workload"})
# What a step may show: the comparison's statistics, and the rows in the bucket.
STATS = ("mean", "p50", "p90", "p95", "p99", "min", "max", "count")
SIDES = ("baseline", "candidate")
# The (program, metric, workload) reads one query may make: each is 1 + statistics queries.
MAX_READS = 24
MSG_TOO_MANY = (
    "the selector matches {count} (program, metric, workload) series groups, more than {limit}: "
    'name a program="…" or a metric="…"'
)
BUCKET_SECONDS = {"hour": 3600, "day": 86400}

AnyUser = User | AnonymousUser


@dataclass(frozen=True)
class SeriesKey:
    definition: MetricDefinition
    program: Program
    side: str
    stat: str
    workload: Workload | None

    def labels(self) -> dict[str, str]:
        system = self.program.baseline_system if self.side == "baseline" else self.program.candidate_system
        labels = {
            "__name__": METRIC_NAME,
            "metric": self.definition.key,
            "program": self.program.slug,
            "side": self.side,
            "system": system.key,
            "stat": self.stat,
            "unit": self.definition.unit,
        }
        if self.workload is not None:
            labels["workload"] = self.workload.key
        return labels


@dataclass(frozen=True)
class RangeSeries:
    labels: dict[str, str]
    values: list[tuple[float, float]]  # (Unix seconds, value) at each step that has one


def series_matching(user: AnyUser, selectors: Sequence[Selector]) -> list[SeriesKey]:
    """Every series any of `selectors` matches (their union, in a stable order)."""
    definitions = list(_definitions(selectors))
    programs = list(
        policies.programs_readable(user)
        .select_related("baseline_system", "candidate_system")
        .order_by("slug")
    )
    named = set().union(*(s.literal_values("workload") or frozenset() for s in selectors)) - {""}
    workloads = list(Workload.objects.filter(key__in=named).order_by("key")) if named else []
    found: dict[tuple[int, int, str, str, int | None], SeriesKey] = {}
    for definition in definitions:
        for program in programs:
            for workload in [None, *workloads]:
                for side in SIDES:
                    for stat in STATS:
                        key = SeriesKey(definition, program, side, stat, workload)
                        labels = key.labels()
                        if any(s.matches(labels) for s in selectors):
                            identity = (
                                definition.pk,
                                program.pk,
                                side,
                                stat,
                                workload.pk if workload else None,
                            )
                            found[identity] = key
    return list(found.values())


def _definitions(selectors: Sequence[Selector]) -> Iterable[MetricDefinition]:
    """The active definitions, narrowed in SQL to the keys the selectors name where every one names some."""
    queryset = MetricDefinition.objects.filter(status=MetricDefinition.Status.ACTIVE).order_by("key")
    keys = [s.literal_values("metric") for s in selectors]
    if keys and all(k is not None for k in keys):
        queryset = queryset.filter(key__in=set().union(*(k for k in keys if k is not None)))
    return queryset


def label_names(user: AnyUser, selectors: Sequence[Selector]) -> list[str]:
    """Every series has the same labels (`workload` where a selector names one, so it is listed too):
    all of them, or none where `selectors` match no series."""
    if selectors and not series_matching(user, selectors):
        return []
    return sorted({"__name__", *LABELS})


def label_values(user: AnyUser, label: str, selectors: Sequence[Selector]) -> list[str]:
    """The values `label` takes over the matched series (every series without `selectors`); `workload`
    is every workload's key, since a selector may name any."""
    if label == "workload":
        return list(Workload.objects.order_by("key").values_list("key", flat=True))
    if label not in LABELS and label != "__name__":
        return []
    everything = selectors or [Selector(())]
    return sorted({key.labels()[label] for key in series_matching(user, everything)})


def _floor(moment: float, bucket: str) -> int:
    seconds = BUCKET_SECONDS[bucket]
    return int(moment // seconds * seconds)


def series_range(
    user: AnyUser, selector: Selector, *, start: float, end: float, step: float
) -> list[RangeSeries]:
    """Each matched series with points at start, start + step, … ≤ end (Unix seconds), the steps its
    buckets have a value for; series without any are left out, as Prometheus leaves them."""
    keys = series_matching(user, [selector])
    groups: dict[tuple[int, int, int | None], list[SeriesKey]] = defaultdict(list)
    for key in keys:
        groups[(key.program.pk, key.definition.pk, key.workload.pk if key.workload else None)].append(key)
    if len(groups) > MAX_READS:
        raise PromQLError(MSG_TOO_MANY.format(count=len(groups), limit=MAX_READS))
    bucket = "hour" if timedelta(seconds=end - start) <= MAX_HOURLY else "day"
    since = datetime.fromtimestamp(_floor(start, bucket), tz=UTC)
    until = datetime.fromtimestamp(_floor(end, bucket) + BUCKET_SECONDS[bucket], tz=UTC)
    steps = [round(start + k * step, 3) for k in range(int((end - start) // step) + 1)]
    result = []
    for members in groups.values():
        first = members[0]
        read = window_series(
            definition=first.definition,
            baseline=first.program.baseline_system,
            candidate=first.program.candidate_system,
            workload=first.workload,
            since=since,
            until=until,
            statistics=sorted({key.stat for key in members}),
            bucket=bucket,
        )
        for key in members:
            series = read[key.stat]
            points = {
                int(at.timestamp()): value
                for at, value in (series.baseline if key.side == "baseline" else series.candidate)
            }
            values = [
                (t, points[_floor(t, series.bucket)]) for t in steps if _floor(t, series.bucket) in points
            ]
            if values:
                labels = key.labels() | {
                    "bucket": series.bucket,
                    "read": "rollups" if series.from_rollups else "rows",
                }
                result.append(RangeSeries(labels, values))
    return result
