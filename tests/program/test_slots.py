"""Templates with slots: a program made on a registry without the template's metrics, bound later,
passes its gates on its own data with no waiver."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from core.models import Transition
from metrics.models import MetricDefinition, Workload
from program.models import Criterion, Decision, Gate, Phase, Program
from tests.metrics.factories import definition
from tests.program.factories import make_program, metrics_for_template, observe, spread

PAYLOAD = {
    "slug": "own-rebuild",
    "name": "Our rebuild",
    "start_date": "2026-01-01",
    "baseline_system": "old-stack",
    "candidate_system": "new-stack",
}
OWN = {
    "throughput": "tokens-per-sec",
    "step_time": "iteration-time",
    "scaling_efficiency": "weak-scaling",
    "canary_workload": "bert-finetune",
    "large_workload": "gpt-pretrain",
}


def systems(client) -> None:
    for key in ("old-stack", "new-stack"):
        assert client.post("/api/v1/systems/", {"key": key, "name": key}, format="json").status_code == 201


def own_registry() -> dict:
    """The program's own metrics and workloads, none of them the template's suggested keys."""
    return {
        "throughput": definition(
            key="tokens-per-sec", unit="token/s", direction="higher_is_better", statistic="mean"
        ),
        "step_time": definition(
            key="iteration-time", unit="ms", direction="lower_is_better", statistic="p50"
        ),
        "scaling": definition(
            key="weak-scaling", unit="dimensionless", direction="higher_is_better", statistic="mean"
        ),
        "canary": Workload.objects.create(
            key="bert-finetune", name="BERT", size="medium", criticality="peripheral"
        ),
        "large": Workload.objects.create(key="gpt-pretrain", name="GPT", size="large", criticality="core"),
    }


def exit_gate(kind: str) -> Gate:
    return Gate.objects.get(phase__kind=kind, kind="exit")


def test_a_program_on_an_empty_registry_gets_every_phase_and_gate_unbound(as_user, lead):
    client = as_user(lead)
    systems(client)
    response = client.post("/api/v1/programs/", PAYLOAD, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert [p["kind"] for p in body["phases"]] == ["poc", "canary", "cutover", "frontier"]
    assert [[g["kind"] for g in p["gates"]] for p in body["phases"]] == [
        ["milestone", "exit"],
        ["exit"],
        ["exit"],
        ["exit"],
    ]
    # The every-metric criterion has no slot: it compares every metric the program's systems report.
    measured = Criterion.objects.exclude(kind__in=["manual", "every_metric"])
    assert measured.count() == 5
    assert not measured.filter(metric__isnull=False).exists()
    assert set(measured.values_list("slot", flat=True)) == {"throughput", "step_time", "scaling_efficiency"}

    gate = client.post(f"/api/v1/gates/{exit_gate('canary').pk}/evaluate/", format="json").json()
    throughput = next(c for c in gate["criteria"] if c["slot"] == "throughput")
    assert throughput["metric"] is None and throughput["workload"] is None
    assert throughput["workload_slot"] == "canary_workload"
    assert throughput["result"]["outcome"] == "inconclusive"
    assert throughput["result"]["reason"] == (
        "needs a metric: slot 'throughput' is not bound; needs a workload: slot 'canary_workload' is not bound."
    )
    assert gate["status"] == "open"


def test_bound_later_the_gates_pass_on_the_programs_own_data_without_a_waiver(as_user, lead):
    client = as_user(lead)
    systems(client)
    slug = client.post("/api/v1/programs/", PAYLOAD, format="json").json()["slug"]
    own = own_registry()

    bound = client.post(f"/api/v1/programs/{slug}/bindings/", {"bindings": OWN}, format="json")
    assert bound.status_code == 200, bound.json()
    assert bound.json()["bound"]["throughput"] == "tokens-per-sec@1"
    assert bound.json()["criteria_updated"] == 5 and bound.json()["skipped_gates"] == []
    slots = {s["name"]: s for s in bound.json()["slots"]}
    assert slots["canary_workload"]["bound"] == ["bert-finetune"] and slots["throughput"]["unbound"] == 0
    assert (
        not Criterion.objects.exclude(kind__in=["manual", "every_metric"])
        .filter(metric__isnull=True)
        .exists()
    )
    record = Transition.objects.get(action="bound")
    assert record.data["bindings"]["large_workload"] == "gpt-pretrain" and record.actor == lead

    old, new = (Program.objects.get().baseline_system, Program.objects.get().candidate_system)
    for workload in (own["canary"], own["large"]):
        observe(own["throughput"], old, workload, spread(100), tag=workload.key)
        observe(own["throughput"], new, workload, spread(120), tag=workload.key)
        observe(own["step_time"], old, workload, spread(800), tag=workload.key)
        observe(own["step_time"], new, workload, spread(700), tag=workload.key)
    observe(own["scaling"], new, own["large"], spread(0.95))

    for kind in ("poc", "canary", "cutover"):
        gate = exit_gate(kind)
        for manual in gate.criteria.filter(kind="manual"):
            assert client.post(f"/api/v1/criteria/{manual.pk}/attest/", {}, format="json").status_code == 200
        evaluated = client.post(f"/api/v1/gates/{gate.pk}/evaluate/", format="json").json()
        outcomes = {c["name"]: c["result"]["outcome"] for c in evaluated["criteria"]}
        assert set(outcomes.values()) == {"pass"}, outcomes
        decided = client.post(f"/api/v1/gates/{gate.pk}/decision/", {"decision": "pass"}, format="json")
        assert decided.status_code == 201, decided.json()
        advanced = client.post(
            f"/api/v1/programs/{slug}/advance/", {"reason": f"{kind} passed"}, format="json"
        )
        assert advanced.status_code == 200, advanced.json()
    assert Phase.objects.get(kind="frontier").status == "active"
    assert not Decision.objects.filter(decision="waive").exists()
    assert Decision.objects.filter(decision="pass").count() == 3


def test_binding_skips_decided_gates_and_names_them(as_user, lead):
    client = as_user(lead)
    systems(client)
    slug = client.post("/api/v1/programs/", PAYLOAD, format="json").json()["slug"]
    own_registry()
    waived = client.post(
        f"/api/v1/gates/{exit_gate('poc').pk}/decision/",
        {"decision": "waive", "note": "no data yet"},
        format="json",
    )
    assert waived.status_code == 201
    response = client.post(
        f"/api/v1/programs/{slug}/bindings/", {"bindings": {"throughput": "tokens-per-sec"}}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["skipped_gates"] == ["Key hypothesis proven"]
    assert response.json()["criteria_updated"] == 2  # canary and cutover, not the waived PoC gate
    assert Criterion.objects.get(gate=exit_gate("poc"), slot="throughput").metric is None
    assert Criterion.objects.filter(slot="throughput", metric__key="tokens-per-sec").count() == 2
    slot = next(s for s in response.json()["slots"] if s["name"] == "throughput")
    assert slot["decided"] == 1 and slot["unbound"] == 0


@pytest.mark.parametrize(
    ("bindings", "status", "field"),
    [
        ({"thruput": "tokens-per-sec"}, 400, "bindings.thruput"),
        ({"throughput": "no-such-metric"}, 400, "bindings.throughput"),
        ({"throughput": "tokens-per-sec@9"}, 400, "bindings.throughput"),
        ({"throughput": "bert-finetune"}, 400, "bindings.throughput"),  # a workload in a metric slot
        ({"canary_workload": "no-such-workload"}, 400, "bindings.canary_workload"),
        ({"throughput": "draft-metric"}, 400, "bindings.throughput"),
        ({"throughput": "tokens-per-sec@1"}, 409, "bindings.throughput"),  # deprecated by v2
    ],
)
def test_an_explicit_unknown_binding_is_refused_naming_the_slot(as_user, lead, bindings, status, field):
    client = as_user(lead)
    systems(client)
    own_registry()
    definition(key="draft-metric", status="draft")
    MetricDefinition.objects.filter(key="tokens-per-sec").update(status="deprecated")
    definition(
        key="tokens-per-sec", version=2, unit="token/s", direction="higher_is_better", statistic="mean"
    )
    response = client.post("/api/v1/programs/", {**PAYLOAD, "bindings": bindings}, format="json")
    assert response.status_code == status, response.json()
    assert field in [e["field"] for e in response.json()["errors"]]
    assert not Program.objects.exists()
    if status == 409:
        assert "tokens-per-sec@2" in response.json()["detail"]

    created = client.post("/api/v1/programs/", PAYLOAD, format="json")
    later = client.post(
        f"/api/v1/programs/{created.json()['slug']}/bindings/", {"bindings": bindings}, format="json"
    )
    assert later.status_code == status and field in [e["field"] for e in later.json()["errors"]]
    assert not Transition.objects.filter(action="bound").exists()


def test_explicit_bindings_win_over_suggestions_and_null_leaves_a_slot_unbound(as_user, lead, db):
    ref = metrics_for_template()
    own = own_registry()
    body = {
        **PAYLOAD,
        "baseline_system": "legacy",
        "candidate_system": "rebuilt",
        "bindings": {"throughput": "tokens-per-sec@1", "scaling_efficiency": None},
    }
    response = as_user(lead).post("/api/v1/programs/", body, format="json")
    assert response.status_code == 201, response.json()
    assert {c.metric for c in Criterion.objects.filter(slot="throughput")} == {own["throughput"]}
    assert Criterion.objects.get(slot="scaling_efficiency").metric is None
    assert {c.metric for c in Criterion.objects.filter(slot="step_time")} == {ref["step"]}  # suggested
    created = Transition.objects.get(action="created", object_id=Program.objects.get().pk)
    assert created.data["bindings"]["scaling_efficiency"] is None


@pytest.mark.parametrize("user", ["engineer", "viewer"])
def test_only_leads_bind(as_user, lead, request, user):
    client = as_user(lead)
    systems(client)
    slug = client.post("/api/v1/programs/", PAYLOAD, format="json").json()["slug"]
    own_registry()
    response = as_user(request.getfixturevalue(user)).post(
        f"/api/v1/programs/{slug}/bindings/", {"bindings": OWN}, format="json"
    )
    assert response.status_code == 403
    assert not Criterion.objects.filter(metric__isnull=False).exists()


def test_a_measured_criterion_may_lack_a_metric_only_while_it_has_a_slot(lead, db):
    metrics_for_template()
    make_program(lead)
    gate = exit_gate("canary")
    with pytest.raises(IntegrityError), transaction.atomic():
        Criterion.objects.create(gate=gate, name="no metric, no slot", kind="relative", threshold=1.0)
    Criterion.objects.create(
        gate=gate, name="waits for its slot", kind="relative", threshold=1.0, slot="throughput"
    )


def test_a_metric_chosen_by_hand_detaches_the_criterion_from_its_slot(as_user, lead):
    client = as_user(lead)
    systems(client)
    assert client.post("/api/v1/programs/", PAYLOAD, format="json").status_code == 201
    own = own_registry()
    other = definition(key="samples-per-sec", unit="sample/s", direction="higher_is_better", statistic="mean")
    hand = Criterion.objects.filter(slot="throughput", gate=exit_gate("canary")).first()
    response = client.patch(f"/api/v1/criteria/{hand.pk}/", {"metric": other.ref}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["slot"] in ("", None)
    bound = client.post(
        f"/api/v1/programs/{PAYLOAD['slug']}/bindings/",
        {"bindings": {"throughput": "tokens-per-sec"}},
        format="json",
    )
    assert bound.status_code == 200, bound.json()
    hand.refresh_from_db()
    assert hand.metric == other  # the binding did not overwrite the lead's choice
    assert Criterion.objects.filter(slot="throughput", metric=own["throughput"]).exists()
    edited = Transition.objects.filter(action="criterion_edited").last()
    assert edited.data["changes"]["slot"] == ["throughput", ""]
