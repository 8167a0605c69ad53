"""Pull sources through the API: metric owners register them; bad input is a 400 naming the field."""

from __future__ import annotations

import pytest

from core.models import Transition
from metrics.models import PullSource
from tests.metrics.factories import definition

pytestmark = pytest.mark.django_db
URL = "/api/v1/pull-sources/"


def body(**changes) -> dict:
    values = {
        "metric": "latency",
        "system": "rebuilt",
        "base_url": "http://prometheus.internal:9090",
        "query": 'request_seconds{{workload="{workload}"}}',
        "unit": "s",
        "step_seconds": 30,
        "point_kind": "sample",  # latency is sampled per_request
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


# Sampling that matches (issue 26, item 2): a source declares what one point is, which must fit the
# sampling of the metric it feeds.
AGGREGATE_QUERY = 'histogram_quantile(0.5, rate(request_seconds_bucket{{workload="{workload}"}}[5m]))'


@pytest.mark.parametrize("point_kind", ["aggregate", None])  # None: omitted, which means aggregate
def test_aggregates_into_a_per_request_metric_are_refused_naming_point_kind(
    ref, as_user, metric_owner, point_kind
):
    changes = {"query": AGGREGATE_QUERY, "point_kind": point_kind}
    sent = {k: v for k, v in body(**changes).items() if v is not None}

    response = as_user(metric_owner).post(URL, sent, format="json")

    assert response.status_code == 400, response.json()
    assert [e["field"] for e in response.json()["errors"]] == ["point_kind"]
    assert "per_request" in response.json()["detail"] and "sample" in response.json()["detail"]
    assert not PullSource.objects.exists()


def test_an_unknown_point_kind_is_a_400_naming_it(ref, as_user, metric_owner):
    response = as_user(metric_owner).post(URL, body(point_kind="histogram"), format="json")

    assert response.status_code == 400 and "point_kind" in {e["field"] for e in response.json()["errors"]}


@pytest.mark.parametrize(
    ("sampling", "point_kind"),
    [("per_request", "sample"), ("per_step", "sample"), ("per_run", "sample"), ("per_interval", "aggregate")],
)
def test_a_point_kind_that_fits_the_sampling_is_registered_and_shown(
    ref, as_user, metric_owner, sampling, point_kind
):
    definition(key="probe", sampling=sampling)

    created = as_user(metric_owner).post(URL, body(metric="probe", point_kind=point_kind), format="json")

    assert created.status_code == 201, created.json()
    assert created.json()["point_kind"] == point_kind
    assert PullSource.objects.get().point_kind == point_kind


def test_samples_into_a_per_interval_metric_are_refused(ref, as_user, metric_owner):
    definition(key="utilisation", unit="percent", sampling="per_interval")

    response = as_user(metric_owner).post(
        URL, body(metric="utilisation", unit="percent", point_kind="sample"), format="json"
    )

    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "point_kind"


def test_a_patch_to_a_point_kind_that_does_not_fit_keeps_the_source(ref, as_user, metric_owner):
    client = as_user(metric_owner)
    source_id = client.post(URL, body(), format="json").json()["id"]

    response = client.patch(f"{URL}{source_id}/", {"point_kind": "aggregate"}, format="json")

    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "point_kind"
    assert PullSource.objects.get(pk=source_id).point_kind == "sample"


def test_a_source_that_disagrees_may_be_disabled_but_not_enabled_again(ref, as_user, metric_owner):
    """A source from before point kinds (migrated as aggregate) feeding a per_request metric."""
    client = as_user(metric_owner)
    source_id = client.post(URL, body(), format="json").json()["id"]
    PullSource.objects.filter(pk=source_id).update(point_kind="aggregate")

    assert client.patch(f"{URL}{source_id}/", {"enabled": False}, format="json").status_code == 200
    enabling = client.patch(f"{URL}{source_id}/", {"enabled": True}, format="json")
    assert enabling.status_code == 400 and enabling.json()["errors"][0]["field"] == "point_kind"
    declared = client.patch(f"{URL}{source_id}/", {"enabled": True, "point_kind": "sample"}, format="json")
    assert declared.status_code == 200 and declared.json()["point_kind"] == "sample"


def test_the_fit_is_judged_against_the_version_the_rows_go_to(ref, as_user, metric_owner):
    """Rows are pulled by key, into the active version: a new version sampled per_interval makes the
    source's samples disagree, so an edit must declare aggregates."""
    client = as_user(metric_owner)
    source_id = client.post(URL, body(), format="json").json()["id"]
    ref["latency"].status = "deprecated"
    ref["latency"].save()
    definition(key="latency", version=2, sampling="per_interval")

    response = client.patch(f"{URL}{source_id}/", {"step_seconds": 60}, format="json")

    assert response.status_code == 400 and "latency@2" in response.json()["detail"]
    assert client.patch(f"{URL}{source_id}/", {"point_kind": "aggregate"}, format="json").status_code == 200
