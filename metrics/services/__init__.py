"""Every write of the metrics app: the definition registry, observation ingest, reference deletes."""

from metrics.services.definitions import (
    definition_activate,
    definition_deprecate,
    definition_register,
    definition_update,
    definition_version_create,
)
from metrics.services.ingest import IngestResult, observations_ingest, observations_replay
from metrics.services.references import reference_delete

__all__ = [
    "IngestResult",
    "definition_activate",
    "definition_deprecate",
    "definition_register",
    "definition_update",
    "definition_version_create",
    "observations_ingest",
    "observations_replay",
    "reference_delete",
]
