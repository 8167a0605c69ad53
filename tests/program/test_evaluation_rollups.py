"""Gate evaluations over the rollup threshold judge from the day rollups: evidence, reuse, refresh."""

from __future__ import annotations

from unittest import mock

import pytest

from core.models import OutboxMessage
from metrics.models import Observation
from metrics.rollups.maintain import rollups_mark_stale, rollups_refresh_stale
from metrics.rollups.sketch import ACCURACY
from metrics.selectors import comparison_compute
from program import services
from program.models import Gate
from tests.program.factories import observe, program_with_canary_rows


@pytest.fixture
def ref(db, lead, settings):
    settings.ROLLUP_THRESHOLD = 30  # 60 rows a side: over it
    return program_with_canary_rows(lead)


def _evaluate():
    with mock.patch("program.evaluation.comparison_compute", wraps=comparison_compute) as compare:
        evaluation = services.gate_evaluate(gate=Gate.objects.get(phase__kind="canary", kind="exit"))
    return evaluation, compare.call_count


def test_criteria_over_the_threshold_say_approximate_in_their_evidence(ref):
    evaluation, compared = _evaluate()
    measured = [r for r in evaluation.results.all() if r.criterion.kind != "manual"]
    assert compared == len(measured) == 2
    for result in measured:
        assert result.evidence["approximate"] is True
        assert result.evidence["accuracy"] == ACCURACY
        assert result.evidence["baseline"]["n"] == 60


def test_reuse_follows_the_rollups_and_a_refresh_asks_for_a_new_evaluation(ref):
    first, _ = _evaluate()
    again, compared = _evaluate()
    assert (again.pk, compared) == (first.pk, 0)  # the fingerprint read the rollups alone
    # A late row is not seen by a rollup judgement until its day is recomputed ...
    observe(ref["step"], ref["rebuilt"], ref["medium"], [700.0], tag="late-")
    assert _evaluate()[0].pk == first.pk
    late = Observation.objects.get(run_id="late-rebuilt-0").observed_at
    rollups_mark_stale(definition_ids=[ref["step"].pk], workload_ids=[ref["medium"].pk], start=late, end=late)
    OutboxMessage.objects.all().delete()
    assert rollups_refresh_stale() == 1
    # ... whose refresh queues the gate's evaluation, which then judges anew.
    assert OutboxMessage.objects.filter(task="program.tasks.gate_evaluate").exists()
    second, compared = _evaluate()
    assert second.pk != first.pk and compared == 2
