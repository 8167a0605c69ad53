import pytest

from core.models import Transition
from program.models import WorkloadMigration
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def program(db, lead):
    metrics_for_template()
    return make_program(lead)


def plan(client, program, workload, wave):
    return client.post(
        f"/api/v1/programs/{program.slug}/migrations/", {"workload": workload, "wave": wave}, format="json"
    )


def test_engineer_plans_and_moves_a_workload(as_user, engineer, program):
    client = as_user(engineer)
    created = plan(client, program, "llm-finetune-8b", 0)
    assert created.status_code == 201
    assert created.json()["warning"] == ""
    pk = created.json()["id"]
    for state in ("dual_run", "on_new"):
        response = client.post(
            f"/api/v1/migrations/{pk}/state/", {"state": state, "reason": f"to {state}"}, format="json"
        )
        assert response.status_code == 200, response.json()
    migration = WorkloadMigration.objects.get()
    assert migration.state == "on_new" and migration.moved_on and migration.dual_run_started
    assert list(Transition.objects.filter(action="state").values_list("from_state", "to_state")) == [
        ("on_old", "dual_run"),
        ("dual_run", "on_new"),
    ]


def test_small_or_core_canaries_get_a_warning(as_user, engineer, program):
    client = as_user(engineer)
    assert "small" in plan(client, program, "vision-small", 0).json()["warning"]
    assert "core-critical" in plan(client, program, "llm-pretrain-70b", 0).json()["warning"]
    assert plan(client, program, "llm-pretrain-70b", 2).json()["warning"] == ""


def test_impossible_moves_and_reasonless_rollbacks_are_refused(as_user, engineer, program):
    client = as_user(engineer)
    pk = plan(client, program, "llm-finetune-8b", 0).json()["id"]
    jump = client.post(f"/api/v1/migrations/{pk}/state/", {"state": "on_new", "reason": "x"}, format="json")
    assert jump.status_code == 409
    assert "dual_run" in jump.json()["detail"]
    silent = client.post(f"/api/v1/migrations/{pk}/state/", {"state": "dual_run"}, format="json")
    assert silent.status_code == 400 and silent.json()["errors"][0]["field"] == "reason"
    client.post(f"/api/v1/migrations/{pk}/state/", {"state": "dual_run", "reason": "start"}, format="json")
    no_reason = client.post(f"/api/v1/migrations/{pk}/state/", {"state": "rolled_back"}, format="json")
    assert no_reason.status_code == 400 and no_reason.json()["errors"][0]["field"] == "reason"
    bad = client.post(f"/api/v1/migrations/{pk}/state/", {"state": "teleported"}, format="json")
    assert bad.status_code == 400
    assert WorkloadMigration.objects.get().state == "dual_run"


def test_viewers_cannot_record_migrations(as_user, viewer, program):
    assert plan(as_user(viewer), program, "llm-finetune-8b", 0).status_code == 403
    assert not WorkloadMigration.objects.exists()


def test_unknown_workload_and_bad_wave(as_user, engineer, program):
    client = as_user(engineer)
    unknown = plan(client, program, "nope", 0)
    assert unknown.status_code == 400
    assert unknown.json()["errors"] == [{"field": "workload", "message": "Unknown workload 'nope'."}]
    assert not WorkloadMigration.objects.exists()
    assert plan(client, program, "llm-finetune-8b", -1).json()["errors"][0]["field"] == "wave"
