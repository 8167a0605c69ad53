"""What the comparison page shows besides the numbers: the time-series chart of both systems, the
verdict in words, and, when the version compared has no data on a side, the previous version's offer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.http import QueryDict
from django.utils.safestring import SafeString

from core.charts import time_series_chart
from metrics import selectors
from metrics.boundary import definition_changes
from metrics.models import MetricDefinition, Observation
from metrics.selectors import Comparison, ComparisonQuery
from metrics.wording import verdict_words

BUCKET_WORDS = {"hour": "per hour", "day": "per UTC day"}
X_TITLE = "time (UTC)"


def chart_pair(
    lines: list[tuple[str, list[tuple[datetime, float]]]],
    *,
    unit: str,
    y_title: str,
    x_title: str = X_TITLE,
    wide_width: int = 640,
) -> dict[str, SafeString]:
    """One chart drawn for a wide screen and for a phone (static/css/comparison.css shows one), so its
    text keeps a readable size at either width."""
    return {
        "wide": time_series_chart(
            lines,
            unit=unit,
            y_title=y_title,
            x_title=x_title,
            width=wide_width,
            height=wide_width * 2 // 5 + 4,
        ),
        "narrow": time_series_chart(
            lines,
            unit=unit,
            y_title=y_title,
            x_title=x_title,
            width=340,
            height=250,
            y_count=4,
            x_count=3,
            font=12,
            labels_inside=True,
        ),
    }


def comparison_chart(query: ComparisonQuery, result: Comparison) -> dict[str, Any]:
    """Both systems over the comparison's window (`chart_pair`), and what each point is, in words."""
    series = selectors.comparison_series(
        query,
        statistic=result.statistic,
        rollups=result.rollups_read,
    )
    lines = [
        (f"{result.baseline.system} (baseline)", series.baseline),
        (f"{result.candidate.system} (candidate)", series.candidate),
    ]
    y_title = f"{series.statistic} {BUCKET_WORDS[series.bucket]}, {result.unit}"
    x_title = X_TITLE
    return {
        **chart_pair(lines, unit=result.unit, y_title=y_title, x_title=x_title),
        "caption": (
            f"Each point is the {series.statistic} of one {series.bucket}'s observations of each system"
            + (" (read from the day rollups)" if series.from_rollups else "")
            + "; the verdict is on the whole window."
        ),
        "empty": not (series.baseline or series.candidate),
    }


def badge_words(result: Comparison) -> str:
    return verdict_words(
        verdict=result.verdict,
        statistic=result.statistic,
        baseline_n=result.baseline.n,
        candidate_n=result.candidate.n,
        alpha=result.alpha,
        min_samples=result.min_samples,
    )


@dataclass(frozen=True)
class PreviousOffer:
    definition: MetricDefinition
    url: str
    changes: list[str]
    empty_sides: list[str]


def previous_version_offer(
    query: ComparisonQuery, result: Comparison, params: QueryDict, path: str
) -> PreviousOffer | None:
    """When a side of the compared version has no observations and an older version of the key has
    some: a link to the same comparison on that version. Two queries, only in that case."""
    empty = [side.system for side in (result.baseline, result.candidate) if side.n == 0]
    if not empty or query.definition.version <= 1:
        return None
    previous = (
        MetricDefinition.objects.filter(key=query.definition.key, version__lt=query.definition.version)
        .order_by("-version")
        .first()
    )
    if previous is None:
        return None
    systems = [query.baseline.pk, query.candidate.pk]
    if not Observation.objects.filter(definition=previous, system_id__in=systems).exists():
        return None
    linked = params.copy()
    linked["metric"] = previous.ref
    return PreviousOffer(
        definition=previous,
        url=f"{path}?{linked.urlencode()}",
        changes=definition_changes(previous, query.definition),
        empty_sides=empty,
    )
