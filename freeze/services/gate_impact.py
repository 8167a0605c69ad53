"""An exception naming gate metrics (FreezeException.affected_metrics) changes what those gates'
numbers may mean while it is in force. So when it comes into force (approved) or stops (revoked,
expired, or withdrawn once approved), the undecided gates whose criteria use those metrics re-evaluate,
queued through the outbox in the transaction of the change, and each gate's history says why."""

from __future__ import annotations

from django.contrib.auth.models import User

from freeze.models import FreezeException
from program.services import gates_reevaluate_for_metric_keys


def exception_gates_reevaluate(
    exception: FreezeException, event: str, actor: User | None = None
) -> list[int]:
    """Call inside the transition's transaction. `event` is the past participle ("approved")."""
    keys = list(exception.affected_metrics.values_list("key", flat=True))
    if not keys:
        return []
    return gates_reevaluate_for_metric_keys(
        metric_keys=keys, reason=f"exception #{exception.pk} '{exception.title}' {event}", actor=actor
    )
