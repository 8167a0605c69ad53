"""Shadow data never moves a gate: criteria read the version they pin, and only its rows queue them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from core.models import OutboxMessage
from metrics.dependents import stale_on_supersede
from metrics.ingest import observations_ingest_rows
from metrics.models import IngestBatch
from program.models import Gate
from tests.metrics.factories import definition
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def world(db, lead):
    metrics = metrics_for_template()
    metrics["draft"] = definition(key="step-time", version=2, status="draft", unit="ms", excludes=["warmup"])
    return {**metrics, "program": make_program(lead)}


def push(user, metric: str) -> int:
    at = timezone.now() - timedelta(hours=1)
    rows = [
        {
            "metric": metric,
            "system": system,
            "workload": "llm-finetune-8b",
            "value": 100.0 + i,
            "observed_at": (at + timedelta(seconds=i)).isoformat(),
            "run_id": f"{metric}-{system}-{i}",
        }
        for system in ("legacy", "rebuilt")
        for i in range(5)
    ]
    observations_ingest_rows(rows=rows, actor=user)
    return IngestBatch.objects.latest("pk").pk


def evaluations_queued() -> int:
    return OutboxMessage.objects.filter(task="program.tasks.gate_evaluate").count()


def test_rows_for_the_draft_queue_no_evaluation_of_gates_pinning_the_active_version(world, ingest_user):
    assert Gate.objects.filter(criteria__metric=world["step"]).exists()
    push(ingest_user, "step-time@2")
    assert evaluations_queued() == 0


def test_rows_for_the_pinned_version_do_queue_them(world, ingest_user):
    push(ingest_user, "step-time")
    # The gates pinning it, and those with an every-metric criterion (it reads every active metric).
    reading = Q(criteria__metric=world["step"]) | Q(criteria__kind="every_metric")
    pinned = Gate.objects.filter(reading).distinct().count()
    assert evaluations_queued() == pinned > 0


def test_program_registers_which_gates_go_stale_on_a_supersede(world):
    """The extension point metrics asks (metrics/dependents.py), answered by program/receivers.py."""
    gates = Gate.objects.filter(criteria__metric=world["step"]).distinct()
    names = [d.label for d in stale_on_supersede(world["step"])]
    assert names == [f"Rebuild · {gate.name}" for gate in gates.order_by("pk")]
    assert stale_on_supersede(world["draft"]) == []
    gates.update(stale=True)  # already stale: not listed again, as gates_mark_stale skips them
    assert stale_on_supersede(world["step"]) == []
