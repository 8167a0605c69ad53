"""Reads of the metrics app."""

from metrics.selectors.comparison import (
    Comparison,
    ComparisonQuery,
    SideStats,
    comparison_compute,
    comparison_from_query,
    comparison_query,
)
from metrics.selectors.comparison_series import Series, comparison_series, window_series
from metrics.selectors.registry import (
    definition_get,
    definition_resolve,
    definition_versions,
    definitions_latest,
    observations_list,
    series_daily,
)

__all__ = [
    "Comparison",
    "ComparisonQuery",
    "Series",
    "SideStats",
    "comparison_compute",
    "comparison_from_query",
    "comparison_query",
    "comparison_series",
    "definition_get",
    "definition_resolve",
    "definition_versions",
    "definitions_latest",
    "observations_list",
    "series_daily",
    "window_series",
]
