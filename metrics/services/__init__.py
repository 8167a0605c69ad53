"""Writes of the metrics app: the definition registry, reference deletes. Observation ingest is its own
package, metrics.ingest."""

from metrics.services.definitions import (
    definition_activate,
    definition_deprecate,
    definition_register,
    definition_update,
    definition_version_create,
)
from metrics.services.ensure import definition_ensure_registered
from metrics.services.references import reference_delete

__all__ = [
    "definition_activate",
    "definition_deprecate",
    "definition_ensure_registered",
    "definition_register",
    "definition_update",
    "definition_version_create",
    "reference_delete",
]
