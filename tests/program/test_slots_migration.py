"""Migration 0003 gives criteria made from rebuild-14m before slots existed the slot they came from."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

# The metrics app goes back too: its later migrations add NOT NULL columns the old models don't know.
pytestmark = pytest.mark.postgresql_only(reason="migrates back past metrics 0018, which Citus cannot reverse")

BEFORE = [("program", "0002_criterion_statistic_distribution"), ("metrics", "0004_definition_value_bounds")]
AFTER = [("program", "0003_criterion_slots")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_old_template_criteria_get_their_slots_and_hand_made_ones_do_not():
    apps = migrate(BEFORE)
    user = apps.get_model("auth", "User").objects.create(username="old-lead")
    System = apps.get_model("metrics", "System")
    Workload = apps.get_model("metrics", "Workload")
    definition = apps.get_model("metrics", "MetricDefinition").objects.create(
        key="training-throughput",
        version=1,
        status="active",
        name="T",
        unit="token/s",
        start_event="a",
        end_event="b",
    )
    large = Workload.objects.create(key="llm-pretrain-70b", name="70B", size="large", criticality="core")
    program = apps.get_model("program", "Program").objects.create(
        slug="old",
        name="Old",
        template="rebuild-14m",
        start_date=date(2025, 1, 1),
        lead=user,
        baseline_system=System.objects.create(key="a", name="A"),
        candidate_system=System.objects.create(key="b", name="B"),
    )
    phase = apps.get_model("program", "Phase").objects.create(
        program=program,
        kind="poc",
        name="PoC",
        order=1,
        planned_start=date(2025, 1, 1),
        planned_end=date(2025, 3, 31),
    )
    gate = apps.get_model("program", "Gate").objects.create(
        phase=phase, name="Key hypothesis proven", kind="exit", due_date=date(2025, 3, 31)
    )
    Criterion = apps.get_model("program", "Criterion")
    common = {"gate": gate, "kind": "relative", "metric": definition, "threshold": 0.9}
    Criterion.objects.create(
        name="Training throughput scales — new reaches 90% of old on the large workload",
        workload=large,
        **common,
    )
    Criterion.objects.create(name="Added by hand", **common)

    apps = migrate(AFTER)
    slots = dict(apps.get_model("program", "Criterion").objects.values_list("name", "slot"))
    assert slots == {
        "Training throughput scales — new reaches 90% of old on the large workload": "throughput",
        "Added by hand": "",
    }
    workload_slots = set(
        apps.get_model("program", "Criterion").objects.values_list("workload_slot", flat=True)
    )
    assert workload_slots == {"large_workload", ""}
    migrate(migrate_leaf())


def migrate_leaf():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()
