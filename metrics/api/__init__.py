"""Metrics API: systems, workloads, the definition registry, observations, ingest and comparisons.

One module per resource; this package re-exports what metrics.api.urls and the other API modules import.
"""

from metrics.api.comparisons import ComparisonExport, ComparisonView
from metrics.api.definitions import (
    DefinitionActivate,
    DefinitionDeprecate,
    DefinitionDetail,
    DefinitionListCreate,
    DefinitionVersionDetail,
    DefinitionVersions,
)
from metrics.api.observations import (
    NewestFirst,
    ObservationBatch,
    ObservationExport,
    ObservationFilter,
    ObservationList,
    ObservationOutput,
)
from metrics.api.references import SystemViewSet, WorkloadViewSet
from metrics.api.write_rules import WRITE_RULES

__all__ = [
    "WRITE_RULES",
    "ComparisonExport",
    "ComparisonView",
    "DefinitionActivate",
    "DefinitionDeprecate",
    "DefinitionDetail",
    "DefinitionListCreate",
    "DefinitionVersionDetail",
    "DefinitionVersions",
    "NewestFirst",
    "ObservationBatch",
    "ObservationExport",
    "ObservationFilter",
    "ObservationList",
    "ObservationOutput",
    "SystemViewSet",
    "WorkloadViewSet",
]
