"""Shadow results: each measured criterion judged under a newer version of its metric, shown, never stored."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from program import services
from program.evaluation import criterion_judge
from program.models import Criterion, CriterionResult, Evaluation
from program.shadows import criteria_shadows
from program.versions import current_versions
from tests.program.factories import canary_gate, make_program, metrics_for_template, observe, spread
from tests.program.versioning import next_version


@pytest.fixture
def ref(db, lead):
    ref = metrics_for_template()
    ref["program"] = make_program(lead)
    observe(ref["throughput"], ref["legacy"], ref["medium"], spread(100))
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(90))
    return ref


def with_draft_v2(ref, rebuilt: float = 70):
    """throughput@2 (a draft) on which the candidate reaches only rebuilt/100 of legacy."""
    v2 = next_version(ref["throughput"])
    observe(v2, ref["legacy"], ref["medium"], spread(100), tag="v2-")
    observe(v2, ref["rebuilt"], ref["medium"], spread(rebuilt), tag="v2-")
    return v2


def gate_page(client, lead) -> str:
    client.force_login(lead)
    response = client.get(f"/programs/gates/{canary_gate().pk}/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_gate_page_shows_the_result_under_the_newer_version_beside_the_pinned_one(ref, lead, client):
    with_draft_v2(ref)
    services.gate_evaluate(gate=canary_gate())
    stored = (Evaluation.objects.count(), CriterionResult.objects.count())
    html = gate_page(client, lead)
    assert 'Under v2 <span class="muted">(draft, not pinned)</span>' in html
    assert '<span class="badge fail">fail</span> (0.7' in html  # 0.7× < 0.8× under v2
    assert '<span class="badge pass">pass</span>' in html  # the pinned v1 result
    assert (Evaluation.objects.count(), CriterionResult.objects.count()) == stored  # shown, not stored


def test_a_newer_version_without_observations_has_no_shadow(ref, lead, client):
    next_version(ref["throughput"])
    assert "Under v2" not in gate_page(client, lead)


def test_a_shadow_is_the_judgement_the_criterion_would_get_pinned_to_that_version(ref):
    v2 = with_draft_v2(ref, rebuilt=85)
    criteria = list(canary_gate().criteria.select_related("metric", "workload"))
    program = ref["program"]
    shadows = criteria_shadows(program, criteria, current_versions(criteria))
    throughput = next(c for c in criteria if c.metric == ref["throughput"])
    assert list(shadows) == [throughput.pk]  # step time has no newer version; manual items none
    (shadow,) = shadows[throughput.pk]
    direct = criterion_judge(
        throughput, baseline=program.baseline_system, candidate=program.candidate_system, definition=v2
    )
    assert (shadow.definition, shadow.outcome, shadow.value) == (v2, direct.outcome, direct.value)
    assert shadow.reason == direct.reason


def test_shadows_respect_the_criterions_window(ref, lead):
    v2 = with_draft_v2(ref)
    throughput = Criterion.objects.get(gate=canary_gate(), metric=ref["throughput"])
    services.criterion_edit(actor=lead, criterion=throughput, window_days=1)  # the data is 2 days old
    criteria = list(canary_gate().criteria.select_related("metric", "workload"))
    (shadow,) = criteria_shadows(ref["program"], criteria, current_versions(criteria))[throughput.pk]
    assert shadow.definition == v2 and shadow.outcome == "inconclusive"
    assert "too few samples: baseline 0, candidate 0" in shadow.reason


def test_no_metric_nothing_to_shadow(ref):
    manual = Criterion(gate=canary_gate(), name="manual", kind="manual")
    assert criteria_shadows(ref["program"], [manual], current_versions([manual])) == {}


def page_queries(client, path) -> int:
    client.get(path)
    with CaptureQueriesContext(connection) as context:
        assert client.get(path).status_code == 200
    return len(context.captured_queries)


def test_the_gate_page_reads_shadows_in_a_constant_number_of_queries(
    ref, lead, client, django_assert_num_queries
):
    with_draft_v2(ref)
    step_v2 = next_version(ref["step"])
    observe(step_v2, ref["legacy"], ref["medium"], spread(800), tag="v2-")
    client.force_login(lead)
    path = f"/programs/gates/{canary_gate().pk}/"
    services.gate_evaluate(gate=canary_gate())
    one = page_queries(client, path)
    for i in range(8):
        services.criterion_add(
            actor=lead,
            gate=canary_gate(),
            name=f"extra {i}",
            kind="relative" if i % 2 else "improvement",
            metric=ref["throughput"] if i % 3 else ref["step"],
            workload=ref["medium"],
            threshold=0.5,
            window_days=30 if i % 2 else None,
        )
    services.gate_evaluate(gate=canary_gate())
    client.get(path)  # warm process-wide caches
    with django_assert_num_queries(one):  # 2 shadowed criteria before, 10 now
        html = client.get(path).content.decode()
    assert html.count("Under v2") == 10
