"""Feeds: per definition × system × source, when the newest value arrived — an observation or an OTLP
histogram point (a histogram-only feed that stops is stale too) — one grouped query per table.

A feed's `source` is the observation's `source` field: what a client or receiver wrote there (the
OTLP receiver and Prometheus pull write their own values; `import:<file>` for the import command);
blank reads as "batch", the JSON/NDJSON/CSV API. Staleness is judged against the definition's
expected interval (see `feed_interval`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Max
from django.utils import timezone

from metrics.models import HistogramPoint, MetricDefinition, Observation, Sampling

BLANK_SOURCE = "batch"
STALE_AFTER_INTERVALS = 3
# What "nothing for a while" means per sampling kind when a definition sets no expected_interval:
# per-request and per-interval values arrive continuously, per-step values during training runs.
# A per-run metric arrives when someone runs the benchmark: no natural interval, never stale.
DEFAULT_INTERVALS: dict[str, timedelta | None] = {
    Sampling.PER_REQUEST: timedelta(hours=1),
    Sampling.PER_INTERVAL: timedelta(hours=1),
    Sampling.PER_STEP: timedelta(days=1),
    Sampling.PER_RUN: None,
}


@dataclass(frozen=True)
class Feed:
    definition_id: int
    system_id: int
    metric: str  # the definition's ref, key@version
    owner_team: str
    system: str
    source: str  # as stored ("" for batch); `source_label` for display
    last_observed_at: datetime
    interval: timedelta | None

    @property
    def source_label(self) -> str:
        return self.source or BLANK_SOURCE

    @property
    def age(self) -> timedelta:
        return timezone.now() - self.last_observed_at

    @property
    def age_words(self) -> str:
        """Short enough for a phone's table cell: '12 min', '4 h', '60 days'."""
        minutes = max(int(self.age.total_seconds() // 60), 0)
        if minutes < 60:
            return f"{minutes} min"
        if minutes < 48 * 60:
            return f"{minutes // 60} h"
        return f"{minutes // (24 * 60)} days"

    @property
    def stale_after(self) -> timedelta | None:
        return None if self.interval is None else self.interval * STALE_AFTER_INTERVALS

    @property
    def stale(self) -> bool:
        return self.stale_after is not None and self.age > self.stale_after


def interval_words(interval: timedelta | None) -> str:
    """'1 h', '1 day', '15 min': how the page and the notices say an expected interval."""
    if interval is None:
        return ""
    seconds = int(interval.total_seconds())
    for size, unit in ((86400, "day"), (3600, "h"), (60, "min")):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if unit == 'day' and count != 1 else ''}"
    return f"{seconds} s"


def feed_interval(definition: MetricDefinition) -> timedelta | None:
    if definition.expected_interval is not None:
        return definition.expected_interval
    return DEFAULT_INTERVALS.get(definition.sampling)


def feeds_list() -> list[Feed]:
    """Every feed, ordered by metric, system, source. Three queries whatever the number of feeds."""
    newest: dict[tuple[int, int, str], tuple[str, datetime]] = {}
    for table in (Observation, HistogramPoint):
        grouped = (
            table.objects.values("definition_id", "system_id", "system__key", "source")
            .annotate(last=Max("observed_at"))
            .order_by()
        )
        for row in grouped:
            key = (row["definition_id"], row["system_id"], row["source"])
            if key not in newest or newest[key][1] < row["last"]:
                newest[key] = (row["system__key"], row["last"])
    definitions = MetricDefinition.objects.in_bulk({definition_id for definition_id, _, _ in newest})
    feeds = [
        Feed(
            definition_id=definition_id,
            system_id=system_id,
            metric=definitions[definition_id].ref,
            owner_team=definitions[definition_id].owner_team,
            system=system,
            source=source,
            last_observed_at=last,
            interval=feed_interval(definitions[definition_id]),
        )
        for (definition_id, system_id, source), (system, last) in newest.items()
        if definition_id in definitions
    ]
    return sorted(feeds, key=lambda f: (f.metric, f.system, f.source))
