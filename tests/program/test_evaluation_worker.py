"""After an ingest batch commits, the real worker re-evaluates the gates that use its metrics."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from program import services
from program.models import Evaluation, Gate
from tests.conftest import wait_for
from tests.program.factories import make_program, metrics_for_template


@pytest.mark.services
def test_ingest_batch_triggers_gate_evaluation_on_the_worker(celery_worker_real, lead, ingest_user, as_user):
    metrics_for_template()
    make_program(lead)
    gate = Gate.objects.get(phase__kind="canary", kind="exit")
    for criterion in gate.criteria.filter(kind="manual"):
        services.criterion_attest(actor=lead, criterion=criterion)
    start = timezone.now() - timedelta(hours=3)
    rows = [
        {
            "metric": metric,
            "system": system,
            "workload": "llm-finetune-8b",
            "value": value * (1 + (i % 7) / 100),
            "observed_at": (start + timedelta(seconds=i)).isoformat(),
            "run_id": f"{metric}-{system}-{i}",
        }
        for metric, base, cand in (("training-throughput", 100, 95), ("step-time", 800, 700))
        for system, value in (("legacy", base), ("rebuilt", cand))
        for i in range(40)
    ]
    response = as_user(ingest_user).post("/api/v1/observations/batch/", {"observations": rows}, format="json")
    assert response.status_code == 201
    assert wait_for(lambda: Gate.objects.get(pk=gate.pk).status == "ready")
    evaluation = Evaluation.objects.get(gate=gate)
    assert evaluation.all_required_pass
