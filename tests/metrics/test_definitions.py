"""The definition registry: register, version, activate, deprecate, duplicates, permissions."""

from __future__ import annotations

import pytest

from core.models import Transition
from metrics.models import MetricDefinition
from metrics.signals import definition_superseded

URL = "/api/v1/definitions/"

PAYLOAD = {
    "key": "serving-latency",
    "name": "Serving latency",
    "unit": "ms",
    "direction": "lower_is_better",
    "statistic": "p99",
    "sampling": "per_request",
    "start_event": "the request arrives at the gateway",
    "end_event": "the last byte is sent",
    "includes": ["queueing", "network"],
    "excludes": ["warmup"],
    "owner_team": "inference-platform",
}


@pytest.fixture
def owner_client(as_user, metric_owner):
    return as_user(metric_owner)


def register(client, **changes):
    return client.post(URL, {**PAYLOAD, **changes}, format="json")


def test_metric_owner_registers_a_draft_version_1(owner_client):
    response = register(owner_client)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["ref"], body["status"]) == ("serving-latency@1", "draft")
    assert body["boundary"] == (
        "The clock starts when the request arrives at the gateway and stops when the last byte is sent. "
        "Includes queueing and network. Excludes warmup."
    )


def test_only_metric_owners_register(as_user, viewer, lead):
    for user in (viewer, lead):
        response = register(as_user(user))
        assert response.status_code == 403
        assert "metric owner" in response.json()["detail"]
    assert not MetricDefinition.objects.exists()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"unit": "furlongs-ish"}, "unit"),
        ({"direction": "sideways"}, "direction"),
        ({"includes": ["coffee"]}, "includes.0"),
        ({"start_event": ""}, "start_event"),
        ({"key": "has spaces"}, "key"),
        ({"includes": ["warmup"], "excludes": ["warmup"]}, "excludes"),
    ],
)
def test_bad_definitions_are_refused_naming_the_field(owner_client, changes, field):
    response = register(owner_client, **changes)
    assert response.status_code == 400
    assert field in [error["field"] for error in response.json()["errors"]]
    assert not MetricDefinition.objects.exists()


def test_duplicate_boundary_of_an_active_definition_is_409_naming_it(owner_client):
    register(owner_client)
    owner_client.post(f"{URL}serving-latency/versions/1/activate/")
    response = register(owner_client, key="latency-again", unit="s", name="Other name")
    assert response.status_code == 409
    assert "serving-latency@1" in response.json()["detail"]
    assert response.json()["existing"] == "serving-latency@1"


def test_meaning_fields_of_an_active_version_cannot_change(owner_client):
    register(owner_client)
    owner_client.post(f"{URL}serving-latency/versions/1/activate/")
    response = owner_client.patch(f"{URL}serving-latency/versions/1/", {"excludes": []}, format="json")
    assert response.status_code == 409
    assert "new version" in response.json()["detail"]
    assert MetricDefinition.objects.get().excludes == ["warmup"]
    wording = owner_client.patch(
        f"{URL}serving-latency/versions/1/", {"name": "Gateway latency"}, format="json"
    )
    assert wording.status_code == 200
    assert wording.json()["name"] == "Gateway latency"


def test_new_version_then_activation_deprecates_the_previous(
    owner_client, django_capture_on_commit_callbacks
):
    register(owner_client)
    owner_client.post(f"{URL}serving-latency/versions/1/activate/")
    created = owner_client.post(f"{URL}serving-latency/versions/", {"excludes": []}, format="json")
    assert created.status_code == 201
    assert (created.json()["ref"], created.json()["status"]) == ("serving-latency@2", "draft")
    superseded = []
    definition_superseded.connect(lambda **kw: superseded.append(kw), weak=False, dispatch_uid="t")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            activated = owner_client.post(f"{URL}serving-latency/versions/2/activate/")
    finally:
        definition_superseded.disconnect(dispatch_uid="t")
    assert activated.status_code == 200
    statuses = dict(MetricDefinition.objects.values_list("version", "status"))
    assert statuses == {1: "deprecated", 2: "active"}
    assert owner_client.get(f"{URL}serving-latency/").json()["ref"] == "serving-latency@2"
    v1, v2 = (MetricDefinition.objects.get(version=n).pk for n in (1, 2))
    assert [(kw["old_id"], kw["new_id"]) for kw in superseded] == [(v1, v2)]
    actions = list(Transition.objects.order_by("id").values_list("action", flat=True))
    assert actions == ["registered", "activated", "version_created", "deprecated", "activated"]


def test_version_without_changes_is_refused(owner_client):
    register(owner_client)
    response = owner_client.post(f"{URL}serving-latency/versions/", {}, format="json")
    assert response.status_code == 400
    assert "Nothing differs" in response.json()["detail"]


def test_activating_twice_is_a_conflict(owner_client):
    register(owner_client)
    assert owner_client.post(f"{URL}serving-latency/versions/1/activate/").status_code == 200
    again = owner_client.post(f"{URL}serving-latency/versions/1/activate/")
    assert again.status_code == 409


def test_deprecate_and_filters(owner_client):
    register(owner_client)
    owner_client.post(f"{URL}serving-latency/versions/1/activate/")
    response = owner_client.post(
        f"{URL}serving-latency/versions/1/deprecate/", {"reason": "replaced"}, format="json"
    )
    assert response.json()["status"] == "deprecated"
    assert owner_client.get(URL, {"status": "active"}).json()["count"] == 0
    assert owner_client.get(URL, {"owner_team": "inference-platform"}).json()["count"] == 1


def test_unknown_metric_is_404(owner_client):
    assert owner_client.get(f"{URL}nope/").status_code == 404
    assert owner_client.get(f"{URL}nope/versions/").status_code == 404
