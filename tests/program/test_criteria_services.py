"""The criteria lifecycle services: edit, delete, re-pin (and add's pinning rules), with their audit rows."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from core.errors import ApplicationError
from core.models import Transition
from program import selectors, services
from program.models import Criterion, Evaluation, Gate
from tests.program.factories import canary_gate, observe, spread
from tests.program.versioning import next_version, supersede


def criterion(name_start: str) -> Criterion:
    return Criterion.objects.select_related("metric").get(gate=canary_gate(), name__startswith=name_start)


def audit(action: str) -> list[Transition]:
    return list(Transition.objects.filter(action=action, object_id=canary_gate().pk).order_by("pk"))


def test_edit_changes_the_fields_and_records_each_old_and_new(ref, lead):
    throughput = criterion("Throughput")
    services.criterion_edit(
        actor=lead, criterion=throughput, threshold=0.9, window_days=14, required=False, operator="gte"
    )
    throughput.refresh_from_db()
    assert (throughput.threshold, throughput.window_days, throughput.required) == (0.9, 14, False)
    (row,) = audit("criterion_edited")
    assert row.actor == lead
    assert row.data["changes"] == {
        "threshold": [0.8, 0.9],
        "window_days": [None, 14],
        "required": [True, False],
    }


def test_edit_with_nothing_different_writes_no_audit_row(ref, lead):
    services.criterion_edit(actor=lead, criterion=criterion("Throughput"), threshold=0.8)
    assert audit("criterion_edited") == []


def test_edit_takes_a_metric_by_ref_and_records_it_by_ref(ref, lead):
    services.criterion_edit(actor=lead, criterion=criterion("Throughput"), metric=ref["step"])
    assert criterion("Throughput").metric == ref["step"]
    assert audit("criterion_edited")[0].data["changes"]["metric"] == ["training-throughput@1", "step-time@1"]


@pytest.mark.parametrize("action", ["edit", "delete", "repin", "add"])
def test_changing_a_decided_gates_criteria_is_409_until_it_is_reopened(ref, lead, action):
    services.gate_decide(gate=canary_gate(), actor=lead, decision="fail", note="not yet")
    calls = {
        "edit": lambda: services.criterion_edit(actor=lead, criterion=criterion("Throughput"), threshold=0.5),
        "delete": lambda: services.criterion_delete(actor=lead, criterion=criterion("Throughput")),
        "repin": lambda: services.gate_repin(actor=lead, gate=canary_gate()),
        "add": lambda: services.criterion_add(actor=lead, gate=canary_gate(), name="x", kind="manual"),
    }
    before = list(Criterion.objects.order_by("pk").values())
    with pytest.raises(ApplicationError) as refused:
        calls[action]()
    assert refused.value.status == 409
    assert "was already decided (failed); reopen it first" in refused.value.message
    assert list(Criterion.objects.order_by("pk").values()) == before
    services.gate_reopen(gate=canary_gate(), actor=lead, reason="criteria change")
    calls[action]()  # now allowed


def test_pinning_a_deprecated_version_is_409_naming_the_active_one(ref, lead):
    old = ref["step"]
    new = supersede(old)
    with pytest.raises(ApplicationError) as on_edit:
        services.criterion_edit(actor=lead, criterion=criterion("Throughput"), metric=old)
    assert on_edit.value.status == 409
    assert on_edit.value.message == "step-time@1 is deprecated; pin the active version, step-time@2."
    assert on_edit.value.errors == [{"field": "metric", "message": on_edit.value.message}]
    with pytest.raises(ApplicationError) as on_add:
        services.criterion_add(
            actor=lead, gate=canary_gate(), name="old", kind="relative", metric=old, threshold=1
        )
    assert on_add.value.status == 409 and "step-time@2" in on_add.value.message
    services.criterion_edit(
        actor=lead, criterion=criterion("Throughput"), metric=new
    )  # the active one is fine


def test_a_stale_criterion_can_still_be_edited_without_touching_its_pin(ref, lead):
    supersede(ref["step"])
    services.criterion_edit(actor=lead, criterion=criterion("Step time"), threshold=0.7)
    assert criterion("Step time").metric.ref == "step-time@1"


def test_pinning_a_draft_is_400(ref, lead):
    draft = next_version(ref["step"])
    with pytest.raises(ApplicationError) as refused:
        services.criterion_edit(actor=lead, criterion=criterion("Step time"), metric=draft)
    assert refused.value.status == 400 and refused.value.errors[0]["field"] == "metric"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"kind": "absolute", "statistic": "distribution"}, "statistic"),
        ({"statistic": "distribution", "threshold": 0}, "threshold"),
        ({"kind": "improvement", "statistic": "distribution", "threshold": -100}, "threshold"),
        ({"threshold": None}, "threshold"),
        ({"metric": None}, "metric"),
        ({"min_samples": 1}, "min_samples"),
        ({"name": "  "}, "name"),
        ({"attested_at": None}, "attested_at"),
    ],
)
def test_edits_keep_the_rules_a_new_criterion_keeps(ref, lead, changes, field):
    before = list(Criterion.objects.order_by("pk").values())
    with pytest.raises(ApplicationError) as refused:
        services.criterion_edit(actor=lead, criterion=criterion("Throughput"), **changes)
    assert refused.value.status == 400
    assert refused.value.errors[0]["field"] == field
    assert list(Criterion.objects.order_by("pk").values()) == before
    assert audit("criterion_edited") == []


def test_an_edit_is_evaluated_with_its_new_fields_and_undoing_it_shows_the_first_result_again(ref, lead):
    observe(ref["throughput"], ref["legacy"], ref["medium"], spread(100))
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(90))
    gate = canary_gate()
    first = services.gate_evaluate(gate=gate)

    def outcome() -> str:
        shown = selectors.gate_get(gate.pk)
        (result,) = [
            r for c in shown.criteria.all() if c.name.startswith("Throughput") for r in c.latest_results
        ]
        return result.outcome

    assert outcome() == "pass"  # 0.9× ≥ 0.8×
    services.criterion_edit(actor=lead, criterion=criterion("Throughput"), threshold=0.95)
    second = services.gate_evaluate(gate=gate)
    assert second.pk != first.pk  # the edit changed the inputs: not reused
    assert outcome() == "fail"
    services.criterion_edit(actor=lead, criterion=criterion("Throughput"), threshold=0.8)
    assert services.gate_evaluate(gate=gate).pk == first.pk  # the same inputs as the first time
    assert outcome() == "pass"
    assert Evaluation.objects.filter(gate=gate).count() == 2


def test_delete_removes_the_criterion_and_records_it(ref, lead):
    step = criterion("Step time")
    services.criterion_delete(actor=lead, criterion=step)
    assert not Criterion.objects.filter(pk=step.pk).exists()
    (row,) = audit("criterion_deleted")
    assert row.data["criterion"] == step.name and row.data["metric"] == "step-time@1"


def test_renaming_an_attested_item_withdraws_its_attestation(ref, lead):
    manual = criterion("Trial workloads")
    services.criterion_attest(actor=lead, criterion=manual, link="https://wiki.example.com/x")
    services.criterion_edit(actor=lead, criterion=manual, required=False)
    assert criterion("Trial workloads").attested_at is not None  # advisory now, still vouched for
    services.criterion_edit(actor=lead, criterion=manual, name="Trial workloads stable for 4 weeks")
    manual.refresh_from_db()
    assert manual.attested_at is None and manual.attested_by is None
    assert audit("criterion_edited")[-1].data["attestation_withdrawn"] is True


def test_making_a_criterion_manual_drops_its_measurement(ref, lead):
    services.criterion_edit(actor=lead, criterion=criterion("Throughput"), kind="manual")
    manual = criterion("Throughput")
    assert (manual.metric, manual.workload, manual.threshold) == (None, None, None)


def test_repin_moves_only_the_stale_criteria_in_one_step(ref, lead):
    elsewhere = Criterion.objects.create(
        gate=Gate.objects.get(phase__kind="cutover", kind="exit"),
        name="Step time elsewhere",
        kind="relative",
        metric=ref["step"],
        threshold=1,
    )
    new_step = supersede(ref["step"])
    next_version(ref["throughput"])  # a draft: nothing to move to
    Gate.objects.filter(pk=canary_gate().pk).update(stale=True)
    services.gate_repin(actor=lead, gate=canary_gate())
    assert criterion("Step time").metric == new_step
    assert criterion("Throughput").metric == ref["throughput"]
    assert canary_gate().stale is False
    (row,) = audit("repinned")
    assert row.data["moved"] == [
        {
            "criterion": criterion("Step time").name,
            "id": criterion("Step time").pk,
            "from": "step-time@1",
            "to": "step-time@2",
        }
    ]
    # Other gates pinning step-time@1 are theirs to re-pin.
    elsewhere.refresh_from_db()
    assert elsewhere.metric == ref["step"]


def test_repin_with_nothing_stale_changes_nothing(ref, lead):
    services.gate_repin(actor=lead, gate=canary_gate())
    assert audit("repinned") == []


def test_editing_the_last_stale_pin_clears_the_stale_flag(ref, lead):
    new_step = supersede(ref["step"])
    Gate.objects.filter(pk=canary_gate().pk).update(stale=True)
    services.criterion_edit(actor=lead, criterion=criterion("Step time"), metric=new_step)
    assert canary_gate().stale is False
    assert audit("criterion_edited")[0].data["stale_cleared"] is True


@pytest.mark.parametrize("action", ["edit", "delete", "repin"])
def test_only_program_leads_change_criteria(ref, engineer, action):
    calls = {
        "edit": lambda: services.criterion_edit(
            actor=engineer, criterion=criterion("Throughput"), threshold=0.1
        ),
        "delete": lambda: services.criterion_delete(actor=engineer, criterion=criterion("Throughput")),
        "repin": lambda: services.gate_repin(actor=engineer, gate=canary_gate()),
    }
    with pytest.raises(PermissionDenied):
        calls[action]()
    assert criterion("Throughput").threshold == 0.8


def test_criteria_changes_queue_a_reevaluation(ref, lead):
    from core.models import OutboxMessage

    services.criterion_edit(actor=lead, criterion=criterion("Throughput"), threshold=0.9)
    assert OutboxMessage.objects.filter(key=f"gate-evaluate:{canary_gate().pk}").exists()


def test_a_criterion_deleted_meanwhile_is_a_404_not_an_error(ref, lead):
    stale_copy = criterion("Throughput")
    services.criterion_delete(actor=lead, criterion=criterion("Throughput"))
    for call in (
        lambda: services.criterion_edit(actor=lead, criterion=stale_copy, threshold=0.5),
        lambda: services.criterion_delete(actor=lead, criterion=stale_copy),
    ):
        with pytest.raises(ApplicationError) as refused:
            call()
        assert refused.value.status == 404 and "was deleted" in refused.value.message
