"""What the other apps may use of metrics, besides `metrics.models`: program, freeze, incidents and work
import this module only (tests/test_import_rules.py reads their imports).

Comparisons and their statistics, the comparison chart's series over a window (`window_series`, for
the Prometheus-style query API), the rollups' one threshold rule, ingest and withdrawal of
observations, the tag filters' text, the wording of methods, and the hooks other apps register."""

from __future__ import annotations

from datetime import datetime

from metrics.api.fields import MetricRefField
from metrics.dependents import Dependent, supersede_provider_register
from metrics.inference import judge, judge_shift
from metrics.ingest import observations_ingest_rows
from metrics.ingest.rules import CLOCK_SKEW
from metrics.models import MetricDefinition, System, Workload
from metrics.rollups.maintain import rollups_rebuild
from metrics.rollups.read import Window, rollup_summaries, rollups_answer
from metrics.selectors import Comparison, Series, comparison_compute, definition_resolve, window_series
from metrics.selectors.comparison import SidesRequest, comparison_of_sides, sides_fetch_many
from metrics.selectors.comparison.compute import comparison_of_slices
from metrics.selectors.comparison.slices import SlicedSides
from metrics.selectors.comparison.sql import Side, sides_fetch
from metrics.selectors.comparison.tags import (
    group_by_check,
    tag_filters_as_text,
    tag_filters_check,
    tag_filters_from_text,
    tag_filters_text,
)
from metrics.selectors.comparison_series import MAX_HOURLY
from metrics.selectors.series_presence import series_present
from metrics.selectors.sides_over_time import series_first_day, sides_over_time
from metrics.services import definition_version_create
from metrics.services.ensure import definition_ensure_registered
from metrics.services.withdraw import observations_withdraw
from metrics.signals import definition_superseded, observations_ingested, rollups_refreshed
from metrics.wording import METHODS, comparison_sentence, method_meaning

__all__ = [
    "CLOCK_SKEW",
    "MAX_HOURLY",
    "METHODS",
    "Comparison",
    "Dependent",
    "MetricRefField",
    "Series",
    "Side",
    "SidesRequest",
    "SlicedSides",
    "Window",
    "comparison_compute",
    "comparison_of_sides",
    "comparison_of_slices",
    "comparison_sentence",
    "definition_ensure_registered",
    "definition_resolve",
    "definition_superseded",
    "definition_version_create",
    "group_by_check",
    "judge",
    "judge_shift",
    "method_meaning",
    "observations_ingest_rows",
    "observations_ingested",
    "observations_withdraw",
    "rollup_summaries",
    "rollups_answer",
    "rollups_rebuild",
    "rollups_refreshed",
    "series_first_day",
    "series_present",
    "sides_fetch_many",
    "sides_over_time",
    "supersede_provider_register",
    "tag_filters_as_text",
    "tag_filters_check",
    "tag_filters_from_text",
    "tag_filters_text",
    "window_comparison",
    "window_series",
]


def window_comparison(
    *,
    definition: MetricDefinition,
    system: System,
    before: tuple[datetime, datetime],
    after: tuple[datetime, datetime],
    workload: Workload | None = None,
    statistic: str | None = None,
    reread_max_rows: int | None = None,
) -> Comparison:
    """One metric on one system, the window `after` against the window `before` (the baseline): the
    same comparison, interval and verdict as two systems get, with the two sides read from two time
    windows instead (each [since, until)). `since`/`until` of the answer span both windows.
    `reread_max_rows`: as comparison_compute's (a web request's cap on an exact re-read)."""

    def side(window: tuple[datetime, datetime], rollups: bool = True) -> Side:
        read, _ = sides_fetch(
            definition=definition,
            baseline=system,
            candidate=system,
            workload=workload,
            since=window[0],
            until=window[1],
            rollups=rollups,
        )
        return read

    return comparison_of_sides(
        definition=definition,
        sides=(side(before), side(after)),
        workload=workload,
        since=before[0],
        until=after[1],
        statistic=statistic,
        # Where the rollups' buckets cannot settle the verdict: both windows' rows, exactly.
        reread=lambda: (side(before, rollups=False), side(after, rollups=False)),
        reread_max_rows=reread_max_rows,
    )
