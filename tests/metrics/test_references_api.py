"""Systems and workloads through the API: deleting one still referred to is a 409, never a 500."""

import pytest

from metrics.ingest import observations_ingest_rows
from metrics.models import System, Workload
from tests.metrics.factories import row
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def metrics_client(as_user, metric_owner):
    return as_user(metric_owner)


def test_an_unreferenced_system_is_deleted(metrics_client, ref):
    System.objects.create(key="spare", name="Spare")
    assert metrics_client.delete("/api/v1/systems/spare/").status_code == 204
    assert not System.objects.filter(key="spare").exists()


def test_a_system_or_workload_with_observations_is_a_409(metrics_client, ref, ingest_user):
    observations_ingest_rows(rows=[row(0)], actor=ingest_user)
    for url in ("/api/v1/systems/rebuilt/", "/api/v1/workloads/finetune/"):
        response = metrics_client.delete(url)
        assert response.status_code == 409, response.content
        assert "has observations" in response.json()["detail"]
    assert System.objects.filter(key="rebuilt").exists() and Workload.objects.filter(key="finetune").exists()


def test_a_system_a_program_compares_is_a_409(metrics_client, lead):
    metrics_for_template()
    program = make_program(lead)
    response = metrics_client.delete(f"/api/v1/systems/{program.baseline_system.key}/")
    assert response.status_code == 409, response.content
    assert response.json()["code"] == "conflict"
    assert System.objects.filter(pk=program.baseline_system_id).exists()
