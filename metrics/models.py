from __future__ import annotations

import pghistory
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import F, Func, Q, Value

# observed_at AT TIME ZONE 'UTC': the newest-first list's order across every metric, indexed on its own
# (observation_utc_time) and written the same way by metrics.api.observations (`UTC_TIME`, read as UTC).
UTC_TIME = Func(Value("UTC"), F("observed_at"), function="timezone", output_field=models.DateTimeField())


class System(models.Model):
    key = models.SlugField(max_length=50, unique=True)
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key


class Workload(models.Model):
    class Size(models.TextChoices):
        SMALL = "small"
        MEDIUM = "medium"
        LARGE = "large"

    class Criticality(models.TextChoices):
        CORE = "core"
        PERIPHERAL = "peripheral"

    key = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=120)
    size = models.CharField(max_length=10, choices=Size.choices)
    criticality = models.CharField(max_length=12, choices=Criticality.choices)
    owner_team = models.CharField(max_length=80, blank=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key


class Direction(models.TextChoices):
    HIGHER_IS_BETTER = "higher_is_better"
    LOWER_IS_BETTER = "lower_is_better"


class Statistic(models.TextChoices):
    MEAN = "mean"
    P50 = "p50"
    P90 = "p90"
    P95 = "p95"
    P99 = "p99"
    MIN = "min"
    MAX = "max"


class ComparedStatistic(models.TextChoices):
    """What a comparison or a criterion may judge: one of a definition's statistics, or the whole
    distribution (Mann–Whitney U), which only exists between two systems."""

    MEAN = "mean"
    P50 = "p50"
    P90 = "p90"
    P95 = "p95"
    P99 = "p99"
    MIN = "min"
    MAX = "max"
    DISTRIBUTION = "distribution", "distribution (Mann–Whitney U)"


class Sampling(models.TextChoices):
    PER_REQUEST = "per_request"
    PER_STEP = "per_step"
    PER_RUN = "per_run"
    PER_INTERVAL = "per_interval"


class PointKind(models.TextChoices):
    """What one point of a source is: one measurement, or an aggregate (a rate, an average, a quantile)
    over an interval. Declared by each pull source (and by the OTLP point's type)."""

    SAMPLE = "sample", "one sample"
    AGGREGATE = "aggregate", "an aggregate over an interval"


# Which definitions' sampling a point kind feeds. A sample is one request, step or run as it was measured;
# an aggregate over an interval (PromQL's rate(), avg(), histogram_quantile()) is one value per interval,
# which only a per_interval definition means. Pooling the two would weigh an interval like one step.
POINT_KIND_SAMPLINGS: dict[str, frozenset[str]] = {
    PointKind.SAMPLE: frozenset({Sampling.PER_REQUEST, Sampling.PER_STEP, Sampling.PER_RUN}),
    PointKind.AGGREGATE: frozenset({Sampling.PER_INTERVAL}),
}


def point_kind_fits(point_kind: str, sampling: str) -> bool:
    """Whether points of this kind mean what a definition of this sampling counts as one observation."""
    return sampling in POINT_KIND_SAMPLINGS.get(point_kind, frozenset())


class Phase(models.TextChoices):
    """What part of the work a measurement's clock includes or excludes (one shared vocabulary)."""

    QUEUEING = "queueing"
    DATA_LOADING = "data_loading"
    WARMUP = "warmup"
    COMPILATION = "compilation"
    CHECKPOINTING = "checkpointing"
    COMMUNICATION = "communication"
    EVALUATION = "evaluation"
    PREPROCESSING = "preprocessing"
    NETWORK = "network"


@pghistory.track()  # full field history of every version, beside the readable Transition rows
class MetricDefinition(models.Model):
    """One version of a metric: what is measured, in which unit, and where the clock starts and stops."""

    class Status(models.TextChoices):
        DRAFT = "draft"
        ACTIVE = "active"
        DEPRECATED = "deprecated"

    # Changing any of these on an active version would change what the numbers mean: new version instead.
    # The bounds too: every stored value of a version was accepted within them.
    MEANING_FIELDS = (
        "unit",
        "direction",
        "sampling",
        "start_event",
        "end_event",
        "includes",
        "excludes",
        "min_value",
        "max_value",
    )

    key = models.SlugField(max_length=80)
    version = models.PositiveIntegerField()
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    unit = models.CharField(max_length=40)
    direction = models.CharField(max_length=20, choices=Direction.choices)
    statistic = models.CharField(max_length=6, choices=Statistic.choices, default=Statistic.MEAN)
    sampling = models.CharField(max_length=14, choices=Sampling.choices)
    start_event = models.CharField(max_length=200)
    end_event = models.CharField(max_length=200)
    includes = ArrayField(models.CharField(max_length=20, choices=Phase.choices), default=list, blank=True)
    excludes = ArrayField(models.CharField(max_length=20, choices=Phase.choices), default=list, blank=True)
    owner_team = models.CharField(max_length=80)
    # The range a value may take, in `unit` (a step time is never negative, a share never above 100 %).
    # Ingest refuses a row outside it; empty means unbounded on that side.
    min_value = models.FloatField(null=True, blank=True)
    max_value = models.FloatField(null=True, blank=True)
    # How often values are expected to arrive; a feed is stale after 3× this (metrics.selectors.feeds).
    # Empty: a default by sampling (none for per_run, which arrives whenever a benchmark is run).
    expected_interval = models.DurationField(null=True, blank=True)
    # The OpenTelemetry metric name the OTLP receiver matches (metrics/ingest/formats/otlp.py); blank means the key.
    otel_name = models.CharField(max_length=255, blank=True)
    # Set by the OTLP ingest when it first stores a histogram point of this version: only then do
    # comparisons also read metrics_histogrampoint, so the other metrics' reads stay as they were.
    has_histograms = models.BooleanField(default=False, editable=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    activated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["key", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["key", "version"], name="metricdef_key_version_unique"),
            # Serves "key" → its active version, the lookup every ingest row and comparison makes.
            models.UniqueConstraint(
                fields=["key"], condition=Q(status="active"), name="metricdef_one_active_per_key"
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="metricdef_version_positive"),
            models.CheckConstraint(condition=~Q(start_event=""), name="metricdef_start_event_required"),
            models.CheckConstraint(condition=~Q(end_event=""), name="metricdef_end_event_required"),
            models.CheckConstraint(
                condition=Q(min_value__isnull=True)
                | Q(max_value__isnull=True)
                | Q(min_value__lte=models.F("max_value")),
                name="metricdef_min_not_above_max",
            ),
        ]

    def __str__(self) -> str:
        return self.ref

    @property
    def ref(self) -> str:
        return f"{self.key}@{self.version}"

    @property
    def otel_metric_name(self) -> str:
        return self.otel_name or self.key

    @property
    def higher_is_better(self) -> bool:
        return self.direction == Direction.HIGHER_IS_BETTER


class IngestBatch(models.Model):
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    source = models.CharField(max_length=100, blank=True)
    received = models.PositiveIntegerField()
    inserted = models.PositiveIntegerField()
    definition_ids = ArrayField(models.BigIntegerField(), default=list)
    workload_ids = ArrayField(models.BigIntegerField(), default=list)
    # The span of the batch's observed_at values, which days it touched. The rollups no longer need it:
    # the batch writes its own deltas (metrics.rollups.incremental), as there is no index by batch.
    observed_from = models.DateTimeField(null=True, blank=True)
    observed_to = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "ingest batches"

    def __str__(self) -> str:
        return f"batch {self.pk} ({self.inserted}/{self.received})"


class Observation(models.Model):
    """One measured value, stored in its definition's unit (the arrival unit is kept).

    The natural key is the primary key: the same measurement sent twice is a no-op, never a second
    row. It carries the value (INCLUDE, set in migration 0003), which makes it the covering index of
    comparisons over a whole series — (definition, system[, workload]) prefix, index-only. Reads by
    time (a comparison window, the newest-first list) use the time-leading covering index instead,
    so they cost what the window holds. The table is partitioned by month of observed_at (migration
    0008, metrics.partitions), so each month's keys stay small however long the history grows.
    Every further index or identity column slowed ingest measurably (benchmarks/ingest.py), so there
    is no surrogate id and no index on batch.
    """

    pk = models.CompositePrimaryKey("definition", "system", "workload", "run_id", "observed_at")

    # No per-row foreign-key triggers or indexes here: they made ingest 3× slower (40,000 RI checks
    # per 10,000-row batch). The ingest service checks every reference against the same rows it locks
    # FOR KEY SHARE, set-based, in its transaction; PROTECT refuses deleting referenced rows.
    definition = models.ForeignKey(
        MetricDefinition,
        on_delete=models.PROTECT,
        related_name="observations",
        db_constraint=False,
        db_index=False,
    )
    system = models.ForeignKey(System, on_delete=models.PROTECT, db_constraint=False, db_index=False)
    workload = models.ForeignKey(Workload, on_delete=models.PROTECT, db_constraint=False, db_index=False)
    value = models.FloatField()
    unit = models.CharField(max_length=40)
    observed_at = models.DateTimeField()
    # "C" collation: byte-wise comparison keeps the key index cheap to maintain; run ids are opaque.
    run_id = models.CharField(max_length=120, blank=True, db_collation="C")
    source = models.CharField(max_length=100, blank=True)
    tags = models.JSONField(default=dict, blank=True)
    batch = models.ForeignKey(
        IngestBatch, null=True, on_delete=models.SET_NULL, db_constraint=False, db_index=False
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(value__lt=float("inf")) & Q(value__gt=float("-inf")),
                name="observation_value_finite",
            ),
        ]
        indexes = [
            # A time window of one metric (comparison windows, the newest-first list), index-only.
            models.Index(
                fields=["definition", "observed_at"],
                include=["system", "workload", "value"],
                name="observation_definition_time",
            ),
            # The newest-first list across every metric (metrics.api.observations): a B-tree on the UTC
            # time, an expression no other query writes, so the planner cannot pick it for a metric's
            # reads, where observation_definition_time is the right index (a plain B-tree on observed_at
            # walked every newer row of other metrics for them).
            models.Index(UTC_TIME, name="observation_utc_time"),
        ]

    def __str__(self) -> str:
        return f"{self.definition_id}:{self.value}"


class HistogramPoint(models.Model):
    """One OTLP histogram point (an interval's delta), kept as its buckets: n is its count, the mean
    sum/count, and a quantile lies within the bucket holding its rank (metrics.rollups.buckets).

    The natural key is an observation's plus the stream; values are in the definition's unit. Buckets with a count are
    kept as parallel arrays: the i-th holds `counts[i]` values in [lows[i], highs[i]] (±inf at an
    explicit histogram's open ends). `low`/`high` bound every value of the point: its min and max as
    sent, or the cumulative stream's extremes when the point is a difference of two cumulative ones."""

    definition = models.ForeignKey(
        MetricDefinition, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+", db_index=False)
    workload = models.ForeignKey(Workload, on_delete=models.PROTECT, related_name="+", db_index=False)
    run_id = models.CharField(max_length=120, blank=True, db_collation="C")
    observed_at = models.DateTimeField()
    # The OTLP stream (OtlpStream.stream): each attribute set of a histogram is its own point, and the
    # SDK exports them all at one time.
    stream = models.CharField(max_length=64, db_collation="C")
    count = models.BigIntegerField()
    sum = models.FloatField()
    low = models.FloatField(null=True, blank=True)
    high = models.FloatField(null=True, blank=True)
    lows = ArrayField(models.FloatField())
    highs = ArrayField(models.FloatField())
    counts = ArrayField(models.BigIntegerField())
    unit = models.CharField(max_length=40, help_text="The unit it arrived in.")
    source = models.CharField(max_length=100, blank=True)
    tags = models.JSONField(default=dict, blank=True)
    batch = models.ForeignKey(IngestBatch, null=True, on_delete=models.SET_NULL, db_index=False)

    class Meta:
        constraints = [
            # Also the index of a comparison's read: (definition, system[, workload]) then the window.
            models.UniqueConstraint(
                fields=["definition", "system", "workload", "run_id", "observed_at", "stream"],
                name="histogrampoint_natural_key",
            ),
            models.CheckConstraint(condition=Q(count__gt=0), name="histogrampoint_count_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.definition_id}: n={self.count}"


class OtlpStream(models.Model):
    """The last point of one OTLP stream (resource + scope + metric + point attributes, hashed), so a
    cumulative Sum or Histogram becomes deltas and a re-sent gauge adds nothing (metrics.ingest.streams).
    Updated under a row lock in the ingest's transaction: it holds across workers and restarts."""

    stream = models.CharField(max_length=64, primary_key=True, help_text="sha256 of the stream identity.")
    start_ns = models.BigIntegerField(default=0, help_text="start_time_unix_nano; another one is a reset.")
    time_ns = models.BigIntegerField(default=0)
    # The point as sent: {"value": v} for a number point; {"count", "sum", "min", "max", "layout",
    # "buckets"} for a histogram. Null until a point of the stream is stored.
    state = models.JSONField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.stream


class FeedState(models.Model):
    """An open stale spell of one feed (definition × system × source): the row exists while the feed
    is stale, so its owner team is told once per spell; it is deleted when values arrive again."""

    definition = models.ForeignKey(MetricDefinition, on_delete=models.CASCADE, related_name="+")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=100, blank=True)
    stale_since = models.DateTimeField(help_text="When the stale check first found it stale.")
    last_observed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["definition", "system", "source"], name="feedstate_one_per_feed")
        ]

    def __str__(self) -> str:
        return (
            f"{self.definition_id}/{self.system_id}/{self.source or 'batch'} stale since {self.stale_since}"
        )


class PullSource(models.Model):
    """Where a metric's numbers for one system already live in Prometheus; a beat task pulls them.

    `query` is PromQL with `{workload}` and `{system}` placeholders, run once per workload through
    `query_range` every `step_seconds`. Each series becomes observations through the batch ingest
    service, so a repeated pull is a no-op by the natural key. The last_* fields show failures."""

    definition = models.ForeignKey(MetricDefinition, on_delete=models.CASCADE, related_name="pull_sources")
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="pull_sources")
    base_url = models.URLField(max_length=300)
    query = models.TextField()
    # The unit the query's values are in (converted to the definition's unit); blank = the definition's.
    unit = models.CharField(max_length=40, blank=True)
    step_seconds = models.PositiveIntegerField(default=60)
    # What one point of the query is. query_range evaluates the query once a step, and most queries
    # (rate, avg, histogram_quantile) make each point an aggregate over an interval, so that is the
    # default; it must fit the definition's sampling (POINT_KIND_SAMPLINGS, checked by the service).
    point_kind = models.CharField(max_length=10, choices=PointKind.choices, default=PointKind.AGGREGATE)
    workloads = models.ManyToManyField(Workload, related_name="pull_sources")
    enabled = models.BooleanField(default=True)
    last_pulled_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["definition", "system"], name="pullsource_definition_system_unique"
            ),
            models.CheckConstraint(condition=Q(step_seconds__gte=1), name="pullsource_step_positive"),
            models.CheckConstraint(
                condition=Q(point_kind__in=PointKind.values), name="pullsource_point_kind_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.definition.key} on {self.system.key} from {self.base_url}"


class ObservationRollup(models.Model):
    """One UTC day of one series (definition version × system × workload), summarised (metrics.rollups).

    The moments are exact; `bins`/`negative_bins` are a log-bucket histogram ({bucket key: count}) of
    the positive values and of the negative values' magnitudes, with `zeros` apart: every value is
    within a fixed relative accuracy of its bucket's representative (metrics.rollups.sketch). Days
    merge by adding, so any window of whole days is read from these rows alone."""

    definition = models.ForeignKey(
        MetricDefinition, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    # The unique constraint's index (definition, system, workload, day) serves every read.
    system = models.ForeignKey(
        System, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    workload = models.ForeignKey(
        Workload, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    day = models.DateField()
    n = models.BigIntegerField()
    total = models.FloatField(help_text="Sum of the values.")
    m2 = models.FloatField(help_text="Sum of squared deviations from the day's mean (numerically stable).")
    sumsq = models.FloatField(help_text="Sum of the squared values.")
    min = models.FloatField()
    max = models.FloatField()
    zeros = models.BigIntegerField(default=0)
    bins = models.JSONField(default=dict)
    negative_bins = models.JSONField(default=dict)
    # Exact (percentile_cont) when the day was last recomputed; null once a batch's delta was folded in
    # (until the nightly median recompute, metrics.rollups.maintain), and on rows older than medians.
    median = models.FloatField(null=True, blank=True, help_text="The day's exact median, for charts.")
    refreshed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["definition", "system", "workload", "day"], name="rollup_one_per_series_day"
            )
        ]

    def __str__(self) -> str:
        return f"{self.definition_id}/{self.system_id}/{self.workload_id} {self.day}: n={self.n}"


class RollupDelta(models.Model):
    """One batch's contribution to one day of one series: the rollup's columns over the rows the batch
    inserted, written in its transaction and folded into the ObservationRollup by the rollups_refresh
    task, which deletes it (metrics.rollups.incremental)."""

    definition_id = models.BigIntegerField()
    system_id = models.BigIntegerField()
    workload_id = models.BigIntegerField()
    day = models.DateField()
    n = models.BigIntegerField()
    total = models.FloatField()
    m2 = models.FloatField()
    sumsq = models.FloatField()
    min = models.FloatField()
    max = models.FloatField()
    zeros = models.BigIntegerField()
    bins = models.JSONField()
    negative_bins = models.JSONField()
    batch_id = models.BigIntegerField(help_text="The IngestBatch it came from (for tracing; not a key).")

    class Meta:
        indexes = [
            # The fold takes a definition's deltas; a recompute drops those of its days. Few rows stand
            # at a time, but a refresh that fell behind must not scan them once per definition.
            models.Index(fields=["definition_id", "day"], name="rollupdelta_definition_day"),
        ]

    def __str__(self) -> str:
        return f"rollup delta {self.definition_id}/{self.system_id}/{self.workload_id} {self.day}: +{self.n}"


class RollupStale(models.Model):
    """A day of a definition × workload whose rollups must be recomputed (written by the ingest's
    transaction, cleared by the rollups_refresh task that recomputed it)."""

    definition_id = models.BigIntegerField()
    workload_id = models.BigIntegerField()
    day = models.DateField()
    marked_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["definition_id", "workload_id", "day"], name="rollupstale_unique")
        ]

    def __str__(self) -> str:
        return f"stale rollup {self.definition_id}/{self.workload_id} {self.day}"


class ObservationMonthDropped(models.Model):
    """A month of raw observations dropped by retention (metrics.retention): its partition detached and
    dropped once its rollups were complete. Append-only; from then on the day rollups are the only source
    of those days, so nothing recomputes them from rows (metrics.rollups.maintain)."""

    month = models.DateField(unique=True, help_text="The first day of the month (UTC).")
    rows = models.BigIntegerField(help_text="Rows the partition held when it was dropped.")
    dropped_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"observations of {self.month:%Y-%m} dropped ({self.rows} rows)"
