"""gate_evaluate checks "same inputs as an earlier evaluation" before running any comparison."""

from __future__ import annotations

from unittest import mock

import pytest

from metrics.selectors import comparison_compute
from program import services
from program.models import Evaluation, Gate
from tests.program.factories import make_program, metrics_for_template, observe, spread


@pytest.fixture
def ref(db, lead):
    ref = metrics_for_template()
    ref["program"] = make_program(lead)
    for metric, legacy, rebuilt in (("throughput", 100, 90), ("step", 800, 700)):
        observe(ref[metric], ref["legacy"], ref["medium"], spread(legacy))
        observe(ref[metric], ref["rebuilt"], ref["medium"], spread(rebuilt))
    return ref


def _evaluate() -> tuple[Evaluation, int]:
    """Evaluate the canary exit gate; returns the evaluation and how many comparisons ran."""
    # Counted at the selector: its sample read goes through psycopg's binary cursor, which Django's
    # query capture does not see.
    with mock.patch("program.evaluation.comparison_compute", wraps=comparison_compute) as compare:
        evaluation = services.gate_evaluate(gate=Gate.objects.get(phase__kind="canary", kind="exit"))
    return evaluation, compare.call_count


def test_same_inputs_reuse_the_evaluation_without_comparing_again(ref):
    first, compared = _evaluate()
    assert compared == 2  # throughput and step time
    again, compared = _evaluate()
    assert again.pk == first.pk
    assert compared == 0


def test_a_new_observation_or_criterion_change_evaluates_again(ref):
    first, _ = _evaluate()
    observe(ref["step"], ref["rebuilt"], ref["medium"], [700.0], tag="late-")
    second, compared = _evaluate()
    assert second.pk != first.pk and compared == 2
    criterion = Gate.objects.get(phase__kind="canary", kind="exit").criteria.exclude(kind="manual").first()
    criterion.threshold = 0.5
    criterion.save(update_fields=["threshold"])
    third, compared = _evaluate()
    assert third.pk not in (first.pk, second.pk) and compared == 2
