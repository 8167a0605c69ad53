"""Systems and workloads: deleting one that nothing refers to."""

from __future__ import annotations

from core.errors import ApplicationError
from metrics.models import Observation, System, Workload


def reference_delete(*, instance: System | Workload) -> None:
    """Delete a system or workload; 409 while observations refer to it.

    One EXISTS query comes first, because Django's PROTECT check loads every referring observation.
    Other references (programs, criteria) still refuse through PROTECT."""
    if isinstance(instance, System):
        field, referring = "system", Observation.objects.filter(system=instance)
    else:
        field, referring = "workload", Observation.objects.filter(workload=instance)
    if referring.exists():
        raise ApplicationError(
            f"{field} '{instance.key}' has observations; it cannot be deleted.", status=409, field="key"
        )
    instance.delete()
