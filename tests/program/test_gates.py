"""gate_evaluate, gate_decide, gate_reopen, criteria and staleness."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from core.errors import ApplicationError
from core.models import Transition
from program import services
from program.models import Criterion, CriterionResult, Decision, Evaluation, Gate
from tests.program.factories import (
    canary_gate,
    make_lead,
    make_program,
    metrics_for_template,
    observe,
    spread,
)


def feed_canary(ref, *, throughput=(100, 90), step=(800, 700)):
    """Canary workload numbers: throughput legacy/rebuilt, step time legacy/rebuilt."""
    observe(ref["throughput"], ref["legacy"], ref["medium"], spread(throughput[0]))
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(throughput[1]))
    observe(ref["step"], ref["legacy"], ref["medium"], spread(step[0]))
    observe(ref["step"], ref["rebuilt"], ref["medium"], spread(step[1]))


def outcomes(evaluation: Evaluation) -> dict[str, str]:
    return {r.criterion.name: r.outcome for r in evaluation.results.select_related("criterion")}


def attest_manual(gate: Gate, lead) -> None:
    for criterion in gate.criteria.filter(kind="manual"):
        services.criterion_attest(actor=lead, criterion=criterion, link="https://wiki.example.com/x")


def test_no_data_is_inconclusive_never_pass(ref):
    evaluation = services.gate_evaluate(gate=canary_gate())
    assert set(outcomes(evaluation).values()) == {"inconclusive"}
    assert not evaluation.all_required_pass
    assert canary_gate().status == "open"


def test_too_few_samples_on_one_side_is_inconclusive(ref):
    observe(ref["throughput"], ref["legacy"], ref["medium"], spread(100, 29))
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(100, 200))
    result = CriterionResult.objects.get(
        evaluation=services.gate_evaluate(gate=canary_gate()), criterion__metric=ref["throughput"]
    )
    assert result.outcome == "inconclusive"
    assert "baseline 29" in result.reason


def test_passing_required_criteria_make_the_gate_ready_and_notify(
    ref, lead, mailoutbox, django_capture_on_commit_callbacks
):
    feed_canary(ref)  # throughput 0.9x, step time 800/700 = 1.14x: both ≥ 0.8
    attest_manual(canary_gate(), lead)
    with django_capture_on_commit_callbacks(execute=True):
        evaluation = services.gate_evaluate(gate=canary_gate())
    assert set(outcomes(evaluation).values()) == {"pass"}
    result = evaluation.results.get(criterion__metric=ref["throughput"])
    assert result.value == pytest.approx(0.9, rel=0.01)
    assert result.evidence["baseline"]["n"] == 60 and result.evidence["p_value"] is not None
    assert canary_gate().status == "ready"
    assert [m.subject for m in mailoutbox] == [
        "[Rebuild Tracker] Gate 'New reaches 80% of old on the canary workloads' is ready for review"
    ]


def test_a_failing_criterion_keeps_the_gate_open(ref, lead):
    feed_canary(ref, throughput=(100, 70))
    attest_manual(canary_gate(), lead)
    evaluation = services.gate_evaluate(gate=canary_gate())
    assert outcomes(evaluation)["Throughput on the canary workload ≥ 0.8× legacy"] == "fail"
    assert canary_gate().status == "open"


def test_an_advisory_failure_never_blocks(ref, lead):
    feed_canary(ref)
    gate = canary_gate()
    attest_manual(gate, lead)
    services.criterion_add(
        actor=lead,
        gate=gate,
        name="Throughput +30% (advisory)",
        kind="improvement",
        metric=ref["throughput"],
        workload=ref["medium"],
        threshold=30,
        required=False,
    )
    evaluation = services.gate_evaluate(gate=gate)
    assert outcomes(evaluation)["Throughput +30% (advisory)"] == "fail"
    assert evaluation.all_required_pass
    assert canary_gate().status == "ready"


def test_absolute_and_significance_criteria(ref, lead):
    observe(ref["scaling"], ref["rebuilt"], ref["large"], spread(0.93))
    observe(ref["throughput"], ref["legacy"], ref["large"], spread(100))
    observe(ref["throughput"], ref["rebuilt"], ref["large"], spread(100.2))
    evaluation = services.gate_evaluate(gate=Gate.objects.get(phase__kind="cutover", kind="exit"))
    result = outcomes(evaluation)
    assert result["Scaling efficiency ≥ 0.9"] == "pass"
    # 1.002 ≥ 1.0 holds, but the difference is not significant: not a pass.
    assert result["Throughput ≥ legacy and significantly better"] == "inconclusive"


def test_the_same_data_twice_is_one_evaluation(ref):
    feed_canary(ref)
    first = services.gate_evaluate(gate=canary_gate())
    second = services.gate_evaluate(gate=canary_gate())
    assert first.pk == second.pk
    assert Evaluation.objects.count() == 1
    assert CriterionResult.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_two_evaluations_at_once_store_one(lead):
    ref = metrics_for_template()
    make_program(lead)
    feed_canary(ref)
    gate = canary_gate()
    barrier, errors = threading.Barrier(2), []

    def evaluate():
        try:
            barrier.wait()
            services.gate_evaluate(gate=gate)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=evaluate) for _ in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert errors == []
    assert Evaluation.objects.filter(gate=gate).count() == 1
    assert CriterionResult.objects.count() == 3


def test_only_leads_decide(as_user, engineer, ref):
    response = as_user(engineer).post(
        f"/api/v1/gates/{canary_gate().pk}/decision/", {"decision": "fail"}, format="json"
    )
    assert response.status_code == 403
    assert not Decision.objects.exists()


def test_pass_needs_every_required_criterion_passing(as_user, lead, ref):
    feed_canary(ref, throughput=(100, 50))
    response = as_user(lead).post(
        f"/api/v1/gates/{canary_gate().pk}/decision/", {"decision": "pass"}, format="json"
    )
    assert response.status_code == 409
    body = response.json()
    assert "Throughput on the canary workload" in body["detail"]
    assert "Trial workloads stable in dual-run" in body["detail"]
    assert set(body["failing"]) == {
        "Throughput on the canary workload ≥ 0.8× legacy",
        "Trial workloads stable in dual-run",
    }
    assert canary_gate().status == "open"


def test_waive_needs_a_note_and_bad_decisions_are_400(as_user, lead, ref):
    client = as_user(lead)
    url = f"/api/v1/gates/{canary_gate().pk}/decision/"
    assert client.post(url, {"decision": "waive"}, format="json").json()["errors"][0]["field"] == "note"
    assert client.post(url, {"decision": "maybe"}, format="json").status_code == 400
    assert (
        client.post(url, {"decision": "waive", "note": "Dual-run data is enough"}, format="json").status_code
        == 201
    )
    assert canary_gate().status == "waived"


def test_decision_freezes_its_evidence(as_user, lead, ref):
    feed_canary(ref)
    attest_manual(canary_gate(), lead)
    response = as_user(lead).post(
        f"/api/v1/gates/{canary_gate().pk}/decision/", {"decision": "pass", "note": "clear"}, format="json"
    )
    assert response.status_code == 201
    evidence = response.json()["evidence"]
    throughput = next(c for c in evidence["criteria"] if c["metric"] == "training-throughput@1")
    assert throughput["numbers"]["baseline"]["n"] == 60
    # Why it passed stays answerable: the interval, its method and α, and the data window.
    numbers = throughput["numbers"]
    assert numbers["relative_performance_ci"][0] <= numbers["relative_performance"]
    assert (numbers["method"], numbers["alpha"]) == ("welch-fieller", 0.05)  # throughput: a mean
    assert numbers["window"]["until"] and numbers["candidate"]["ci"]
    # New data later changes nothing in the decision.
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(10), tag="late-")
    services.gate_evaluate(gate=canary_gate())
    assert Decision.objects.get().evidence == evidence
    assert canary_gate().status == "passed"


def test_deciding_a_decided_gate_is_409_and_fail_is_always_possible(as_user, lead, ref):
    client = as_user(lead)
    url = f"/api/v1/gates/{canary_gate().pk}/decision/"
    assert client.post(url, {"decision": "fail", "note": "regressed"}, format="json").status_code == 201
    again = client.post(url, {"decision": "waive", "note": "x"}, format="json")
    assert again.status_code == 409
    assert "reopen" in again.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_two_leads_deciding_at_once_exactly_one_wins(lead, lead2):
    metrics_for_template()
    make_lead(make_program(lead), lead2)
    gate = canary_gate()
    barrier, outcomes_, lock = threading.Barrier(2), [], threading.Lock()

    def decide(user, verdict):
        try:
            barrier.wait()
            services.gate_decide(gate=Gate.objects.get(pk=gate.pk), actor=user, decision=verdict, note="now")
            result = "won"
        except ApplicationError as exc:
            result = exc.status
        finally:
            connection.close()
        with lock:
            outcomes_.append(result)

    threads = [threading.Thread(target=decide, args=args) for args in ((lead, "fail"), (lead2, "waive"))]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert sorted(outcomes_, key=str) == [409, "won"]
    assert Decision.objects.count() == 1
    assert Gate.objects.get(pk=gate.pk).status == Decision.objects.get().gate.status


def test_reopen_needs_a_reason_and_allows_a_new_decision(as_user, lead, ref):
    client = as_user(lead)
    gate = canary_gate()
    client.post(f"/api/v1/gates/{gate.pk}/decision/", {"decision": "fail", "note": "x"}, format="json")
    assert client.post(f"/api/v1/gates/{gate.pk}/reopen/", {"reason": ""}, format="json").status_code == 400
    reopened = client.post(f"/api/v1/gates/{gate.pk}/reopen/", {"reason": "new data"}, format="json")
    assert reopened.status_code == 200
    assert reopened.json()["status"] == "open"
    assert (
        client.post(
            f"/api/v1/gates/{gate.pk}/decision/", {"decision": "waive", "note": "ok"}, format="json"
        ).status_code
        == 201
    )
    assert Decision.objects.filter(reopened_at__isnull=False).count() == 1
    actions = list(
        Transition.objects.filter(object_id=gate.pk, action__in=["decided", "reopened"]).values_list(
            "action", flat=True
        )
    )
    assert actions == ["decided", "reopened", "decided"]


def test_reopening_an_undecided_gate_is_409(as_user, lead, ref):
    response = as_user(lead).post(f"/api/v1/gates/{canary_gate().pk}/reopen/", {"reason": "x"}, format="json")
    assert response.status_code == 409


def test_new_active_version_marks_pinning_gates_stale(ref, metric_owner, django_capture_on_commit_callbacks):
    from metrics.services import definition_activate, definition_version_create

    new = definition_version_create(actor=metric_owner, key="step-time", changes={"excludes": ["warmup"]})
    with django_capture_on_commit_callbacks(execute=True):
        definition_activate(actor=metric_owner, definition=new)
    assert list(Gate.objects.filter(stale=True).values_list("name", flat=True)) == [canary_gate().name]
    assert Transition.objects.filter(action="stale").count() == 1


def test_criteria_api_pins_versions_and_validates(as_user, lead, ref):
    client = as_user(lead)
    url = f"/api/v1/gates/{canary_gate().pk}/criteria/"
    created = client.post(
        url,
        {"name": "Step time better", "kind": "relative", "metric": "step-time", "threshold": 1.0},
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["metric"] == "step-time@1"
    missing = client.post(
        url, {"name": "No threshold", "kind": "relative", "metric": "step-time"}, format="json"
    )
    assert missing.status_code == 400 and missing.json()["errors"][0]["field"] == "threshold"
    unknown = client.post(
        url, {"name": "x", "kind": "relative", "metric": "nope", "threshold": 1}, format="json"
    )
    assert unknown.status_code == 400
    assert unknown.json()["errors"] == [{"field": "metric", "message": "Unknown metric 'nope'."}]
    not_finite = client.post(
        url, {"name": "x", "kind": "relative", "metric": "step-time", "threshold": "nan"}, format="json"
    )
    assert not_finite.status_code == 400
    assert (
        as_user(ref["program"].lead)
        .post(url, {"name": "manual", "kind": "manual"}, format="json")
        .status_code
        == 201
    )
    assert Criterion.objects.filter(gate=canary_gate()).count() == 5
