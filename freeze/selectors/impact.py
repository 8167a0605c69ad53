"""What an exception did to the gate metrics it named, beside what its requester expected.

After the change window ends, each named metric is compared on the system the change lands on (the
candidate system of the window's program) between two windows as long as the change window, at
least a day (a short change still has data): the one just before the change started (the baseline)
and the one just after it ended. Until that after-window is over it is read up to now and marked as
still filling. Only a change that was carried out (approved, and not revoked or withdrawn before
its end) is compared: for the others there is nothing to look back at. The comparison is the
registry's own (metrics.public.window_comparison): relative performance with its interval, better is
> 1 whatever the metric's direction, so "better"/"worse" read alike for every metric."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from freeze.models import ExpectedImpact, FreezeException
from metrics.models import MetricDefinition, System
from metrics.public import Comparison, window_comparison

MIN_SPAN = timedelta(days=1)
Direction = ExpectedImpact.Direction


@dataclass(frozen=True)
class ImpactWindows:
    before: tuple[datetime, datetime]
    after: tuple[datetime, datetime]
    filling: bool  # the after-window has not ended yet: read up to now


@dataclass(frozen=True)
class ImpactOutcome:
    metric: str
    expected: ExpectedImpact | None
    system: str
    state: str  # "pending" (window not over), "not_carried_out", or "compared"
    windows: ImpactWindows | None = None
    comparison: Comparison | None = None

    @property
    def expected_text(self) -> str:
        if self.expected is None:
            return "not stated"
        if self.expected.direction == Direction.UNCHANGED:
            return f"unchanged, within ± {self.expected.size_pct:g} %"
        return f"{self.expected.direction} by {self.expected.size_pct:g} %"

    @property
    def observed_text(self) -> str:
        c = self.comparison
        if c is None:
            return ""
        if c.improvement_pct is None:
            return f"no estimate ({c.reason})"
        text = f"{_signed(c.improvement_pct)} better"
        if c.relative_performance_ci:
            low, high = (_pct(bound) for bound in c.relative_performance_ci)
            text += f" (interval {_signed(low)} to {_signed(high)})"
        return f"{text}; {c.baseline.n} observations before, {c.candidate.n} after"

    @property
    def agreement(self) -> str:
        """How what happened compares with what was expected, from the interval (the verdict)."""
        c = self.comparison
        if c is None or self.expected is None:
            return ""
        return impact_agreement(self.expected.direction, self.expected.size_pct, c)


def _pct(ratio: float) -> float:
    return (ratio - 1) * 100


def _signed(value: float) -> str:
    return f"{value:+.1f} %"


def impact_agreement(direction: str, size_pct: float, comparison: Comparison) -> str:
    verdict = comparison.verdict
    if verdict == "insufficient_data":
        return "too little data to tell"
    if direction == Direction.UNCHANGED:
        ci = comparison.relative_performance_ci
        if ci and -size_pct <= _pct(ci[0]) and _pct(ci[1]) <= size_pct:
            return "as expected: within the band"
        if verdict in (Direction.BETTER, Direction.WORSE):
            return f"not as expected: {verdict}"
        return "unclear: the interval reaches outside the band"
    if verdict == direction:
        return f"as expected: {verdict}"
    if verdict == "no_difference":
        return "no clear change"
    return f"opposite of expected: {verdict}"


def impact_windows(exception: FreezeException, now: datetime) -> ImpactWindows | None:
    start, end = exception.change_starts_at, exception.change_ends_at
    if end > now:
        return None
    span = max(end - start, MIN_SPAN)
    after_end = min(end + span, now)
    return ImpactWindows(before=(start - span, start), after=(end, after_end), filling=after_end < end + span)


def carried_out(exception: FreezeException) -> bool:
    """Approved and left to run to its end: approved still, or expired from approved (decided_at is
    set by approval and cleared by resubmission; a rejection is its own status)."""
    return exception.status in (FreezeException.Status.APPROVED, FreezeException.Status.EXPIRED) and bool(
        exception.decided_at
    )


def _outcome(
    exception: FreezeException,
    metric: MetricDefinition,
    expected: ExpectedImpact | None,
    system: System,
    now: datetime,
) -> ImpactOutcome:
    windows = impact_windows(exception, now)
    if windows is None:
        return ImpactOutcome(metric.key, expected, system.key, "pending")
    if not carried_out(exception):
        return ImpactOutcome(metric.key, expected, system.key, "not_carried_out", windows)
    comparison = window_comparison(
        definition=metric,
        system=system,
        before=windows.before,
        after=windows.after,
        # Read for a page or an API answer: an exact re-read is capped as every request's is.
        reread_max_rows=settings.COMPARISON_REREAD_MAX_ROWS,
    )
    return ImpactOutcome(metric.key, expected, system.key, "compared", windows, comparison)


def exception_impacts(exception: FreezeException, now: datetime | None = None) -> list[ImpactOutcome]:
    """One outcome per named gate metric, by key. Reads the metrics and expectations (prefetched by
    exception_for_page, else two queries) and, once the window is over, two samples per metric."""
    now = now or timezone.now()
    system = exception.window.program.candidate_system
    expected = {impact.metric_id: impact for impact in exception.expected_impacts.all()}
    return [
        _outcome(exception, metric, expected.get(metric.pk), system, now)
        for metric in sorted(exception.affected_metrics.all(), key=lambda m: m.key)
    ]


def impacts_for_metrics(
    metric_keys: list[str], *, limit: int = 6
) -> list[tuple[FreezeException, ImpactOutcome]]:
    """The gate page's look back: the expectations, on these metrics, of the latest carried-out
    exceptions whose window is over (newest first, at most `limit`), each with what happened. One
    query, then two samples per row."""
    now = timezone.now()
    rows = (
        ExpectedImpact.objects.filter(
            metric__key__in=metric_keys,
            exception__change_ends_at__lte=now,
            exception__status__in=(FreezeException.Status.APPROVED, FreezeException.Status.EXPIRED),
            exception__decided_at__isnull=False,
        )
        .select_related("metric", "exception__component", "exception__window__program__candidate_system")
        .order_by("-exception__change_ends_at", "exception_id", "metric__key")[:limit]
    )
    return [
        (
            row.exception,
            _outcome(row.exception, row.metric, row, row.exception.window.program.candidate_system, now),
        )
        for row in rows
    ]
