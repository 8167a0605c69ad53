"""Pull sources through the API: metric owners register them; bad input is a 400 naming the field."""

from __future__ import annotations

import pytest

from core.models import Transition
from metrics.models import PullSource

pytestmark = pytest.mark.django_db
URL = "/api/v1/pull-sources/"


def body(**changes) -> dict:
    values = {
        "metric": "latency",
        "system": "rebuilt",
        "base_url": "http://prometheus.internal:9090",
        "query": 'histogram_quantile(0.5, rate(step_seconds_bucket{{workload="{workload}"}}[5m]))',
        "unit": "s",
        "step_seconds": 30,
        "workloads": ["finetune", "pretrain"],
    }
    values.update(changes)
    return values


def test_a_metric_owner_registers_edits_and_removes_a_source(ref, as_user, metric_owner):
    client = as_user(metric_owner)

    created = client.post(URL, body(), format="json")

    assert created.status_code == 201, created.json()
    data = created.json()
    assert (
        data["metric"] == "latency"
        and data["system"] == "rebuilt"
        and data["workloads"] == ["finetune", "pretrain"]
    )
    assert data["enabled"] is True and data["last_pulled_at"] is None and data["consecutive_failures"] == 0
    url = f"{URL}{data['id']}/"
    patched = client.patch(
        url, {"step_seconds": 60, "enabled": False, "workloads": ["finetune"]}, format="json"
    )
    assert patched.status_code == 200, patched.json()
    assert patched.json()["step_seconds"] == 60 and patched.json()["workloads"] == ["finetune"]
    assert client.get(URL).json()[0]["id"] == data["id"]
    assert client.delete(url).status_code == 204
    assert not PullSource.objects.exists()
    actions = list(
        Transition.objects.filter(object_id=data["id"]).order_by("pk").values_list("action", flat=True)
    )
    assert actions == ["pull_source.create", "pull_source.update", "pull_source.delete"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"base_url": "ftp://prom"}, "base_url"),
        ({"base_url": "not a url"}, "base_url"),
        ({"query": 'up{{job="{job}"}}'}, "query"),
        ({"query": 'up{job="x"}'}, "query"),
        ({"step_seconds": 0}, "step_seconds"),
        ({"step_seconds": -5}, "step_seconds"),
        ({"step_seconds": 2**40}, "step_seconds"),
        ({"unit": "bananas"}, "unit"),
        ({"unit": "GB"}, "unit"),  # latency is in seconds: bytes never convert
        ({"workloads": []}, "workloads"),
        ({"workloads": ["nope"]}, "workloads"),
        ({"metric": "nope"}, "metric"),
        ({"system": "nope"}, "system"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(ref, as_user, metric_owner, changes, field):
    response = as_user(metric_owner).post(URL, body(**changes), format="json")

    assert response.status_code == 400, response.json()
    assert field in {e["field"] for e in response.json()["errors"]}
    assert not PullSource.objects.exists()


def test_a_second_source_for_the_same_metric_and_system_is_a_conflict(ref, as_user, metric_owner):
    client = as_user(metric_owner)
    assert client.post(URL, body(), format="json").status_code == 201
    assert client.post(URL, body(), format="json").status_code == 409


def test_a_patch_with_a_bad_query_keeps_the_source_unchanged(ref, as_user, metric_owner):
    client = as_user(metric_owner)
    source_id = client.post(URL, body(), format="json").json()["id"]

    response = client.patch(f"{URL}{source_id}/", {"query": 'up{{x="{host}"}}'}, format="json")

    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "query"
    assert PullSource.objects.get(pk=source_id).query == body()["query"]


def test_a_viewer_may_read_but_not_register(ref, as_user, viewer):
    assert as_user(viewer).get(URL).status_code == 200
    response = as_user(viewer).post(URL, body(), format="json")
    assert response.status_code == 403
    assert response.json()["detail"] == "Only a metric owner may manage Prometheus pull sources."
