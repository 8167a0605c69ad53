"""Reads of the metrics app."""

from metrics.selectors.comparison import Comparison, SideStats, comparison_compute, comparison_from_query
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
    "SideStats",
    "comparison_compute",
    "comparison_from_query",
    "definition_get",
    "definition_resolve",
    "definition_versions",
    "definitions_latest",
    "observations_list",
    "series_daily",
]
