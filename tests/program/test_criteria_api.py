"""PATCH and DELETE /api/v1/criteria/{id}/, POST /api/v1/gates/{id}/repin/: leads only, checked first."""

from __future__ import annotations

import pytest

from core.models import Transition
from program import services
from program.models import Criterion, Gate
from tests.program.factories import canary_gate
from tests.program.versioning import supersede


def throughput() -> Criterion:
    return Criterion.objects.get(gate=canary_gate(), name__startswith="Throughput")


def url(criterion: Criterion) -> str:
    return f"/api/v1/criteria/{criterion.pk}/"


def test_patch_changes_only_the_fields_sent(as_user, lead, ref):
    response = as_user(lead).patch(
        url(throughput()), {"threshold": 0.9, "metric": "step-time", "workload": None}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["threshold"], body["metric"], body["workload"]) == (0.9, "step-time@1", None)
    assert body["operator"] == "gte" and body["min_samples"] == 30  # untouched, not reset to defaults
    assert Transition.objects.get(action="criterion_edited").data["changes"]["workload"] == [
        "llm-finetune-8b",
        None,
    ]


def test_patch_with_bad_values_is_400_naming_each_field(as_user, lead, ref):
    response = as_user(lead).patch(
        url(throughput()),
        {"threshold": "lots", "min_samples": 1, "operator": "about", "workload": "no-such"},
        format="json",
    )
    assert response.status_code == 400
    fields = {error["field"] for error in response.json()["errors"]}
    assert fields == {"threshold", "min_samples", "operator", "workload"}
    assert throughput().threshold == 0.8


def test_patch_to_an_unknown_workload_names_it(as_user, lead, ref):
    response = as_user(lead).patch(url(throughput()), {"workload": "no-such"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "workload", "message": "Unknown workload 'no-such'."}]


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("no-such", "Unknown metric 'no-such'."),
        ("training-throughput@99", "Unknown metric 'training-throughput@99'."),
        ("training-throughput@x", "'training-throughput@x': the version after @ must be a number."),
    ],
)
def test_patch_to_an_unknown_metric_is_400_naming_metric(as_user, lead, ref, metric, message):
    response = as_user(lead).patch(url(throughput()), {"metric": metric}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "metric", "message": message}]
    assert throughput().metric.ref == "training-throughput@1"


def test_patch_to_a_deprecated_version_is_409_naming_the_active_one(as_user, lead, ref):
    supersede(ref["throughput"])
    step = Criterion.objects.get(gate=canary_gate(), name__startswith="Step time")
    response = as_user(lead).patch(url(step), {"metric": "training-throughput@1"}, format="json")
    assert response.status_code == 409
    body = response.json()
    assert body["detail"] == (
        "training-throughput@1 is deprecated; pin the active version, training-throughput@2."
    )
    assert body["errors"][0]["field"] == "metric" and body["active"] == "training-throughput@2"


@pytest.mark.parametrize("method", ["patch", "delete"])
def test_a_non_lead_gets_403_before_the_body_is_read(as_user, engineer, ref, method):
    response = getattr(as_user(engineer), method)(url(throughput()), {"threshold": "lots"}, format="json")
    assert response.status_code == 403
    assert response.json()["errors"] == []
    verb = "edit" if method == "patch" else "delete"
    assert (
        response.json()["detail"]
        == f"Only a lead of program 'rebuild' or a platform admin may {verb} criteria."
    )
    assert Criterion.objects.filter(pk=throughput().pk, threshold=0.8).exists()


def test_delete_is_204_and_a_repeat_with_the_same_key_replays_it(as_user, lead, ref):
    target = throughput()
    client = as_user(lead)
    first = client.delete(url(target), headers={"Idempotency-Key": "del-1"})
    assert first.status_code == 204
    assert not Criterion.objects.filter(pk=target.pk).exists()
    again = client.delete(url(target), headers={"Idempotency-Key": "del-1"})
    assert again.status_code == 204 and again.headers["Idempotent-Replay"] == "true"
    assert client.delete(url(target)).status_code == 404


def test_changes_on_a_decided_gate_are_409(as_user, lead, ref):
    services.gate_decide(gate=canary_gate(), actor=lead, decision="fail", note="no")
    client = as_user(lead)
    edit = client.patch(url(throughput()), {"threshold": 0.5}, format="json")
    delete = client.delete(url(throughput()))
    repin = client.post(f"/api/v1/gates/{canary_gate().pk}/repin/")
    for response in (edit, delete, repin):
        assert response.status_code == 409
        assert "reopen it first" in response.json()["detail"]


def test_repin_returns_the_gate_with_its_criteria_moved(as_user, lead, ref):
    supersede(ref["step"])
    Gate.objects.filter(pk=canary_gate().pk).update(stale=True)
    response = as_user(lead).post(f"/api/v1/gates/{canary_gate().pk}/repin/")
    assert response.status_code == 200
    body = response.json()
    assert body["stale"] is False
    assert {c["metric"] for c in body["criteria"]} == {"training-throughput@1", "step-time@2", None}


def test_repin_by_a_viewer_is_403(as_user, viewer, ref):
    response = as_user(viewer).post(f"/api/v1/gates/{canary_gate().pk}/repin/")
    assert response.status_code == 403
    assert (
        response.json()["detail"]
        == "Only a lead of program 'rebuild' or a platform admin may re-pin criteria."
    )
