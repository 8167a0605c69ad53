"""program listens to metrics' hooks and answers its questions (metrics never imports program).

The hooks are sent inside the transaction of the change, so the work they ask for is written to the
outbox with it and survives a broker outage (core.outbox)."""

from __future__ import annotations

from collections.abc import Iterable

from django.dispatch import receiver
from django.urls import reverse

from metrics.models import MetricDefinition
from metrics.public import (
    Dependent,
    definition_superseded,
    observations_ingested,
    rollups_refreshed,
    supersede_provider_register,
)
from program.models import Gate


@receiver(observations_ingested, dispatch_uid="program.evaluate_after_ingest")
@receiver(rollups_refreshed, dispatch_uid="program.evaluate_after_rollups")
def evaluate_after_ingest(sender: object, *, definition_ids: Iterable[int], **kwargs: object) -> None:
    """After a batch, and again once its day rollups are recomputed (criteria judged from rollups see
    the batch only then); a gate's evaluation not started yet absorbs the second request."""
    from program.services import gates_evaluate_for_definitions

    gates_evaluate_for_definitions(definition_ids)


@receiver(definition_superseded, dispatch_uid="program.mark_stale")
def mark_stale(sender: object, *, old_id: int, new_id: int, **kwargs: object) -> None:
    from program.services import gates_mark_stale_queue

    gates_mark_stale_queue(old_definition_id=old_id, new_definition_id=new_id)


def gates_stale_on_supersede(definition: MetricDefinition) -> list[Dependent]:
    """The gates gates_mark_stale would flag if `definition` were replaced (one query)."""
    gates = (
        Gate.objects.filter(criteria__metric=definition, stale=False)
        .select_related("phase__program")
        .distinct()
        .order_by("phase__program__name", "pk")
    )
    return [
        Dependent(
            label=f"{gate.phase.program.name} · {gate.name}",
            url=reverse("program:gate", kwargs={"pk": gate.pk}),
            note=gate.get_status_display(),
        )
        for gate in gates
    ]


supersede_provider_register("program.gates", gates_stale_on_supersede)
