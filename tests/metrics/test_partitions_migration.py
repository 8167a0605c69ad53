"""Migration 0008 partitions a table that already holds observations, and its reverse keeps them too."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.postgresql_only(reason="migrates back past metrics 0018, which Citus cannot reverse")

BEFORE = [("metrics", "0007_feed_expected_interval_and_state")]
AFTER = [("metrics", "0008_observation_monthly_partitions")]
MOMENTS = [
    datetime(2020, 3, 1, tzinfo=UTC),  # a month boundary: March, not February
    datetime(2020, 3, 31, 23, 59, 59, tzinfo=UTC),
    datetime(2021, 12, 15, 8, tzinfo=UTC),
]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def stored() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tableoid::regclass::text, run_id, observed_at, value FROM metrics_observation ORDER BY observed_at"
        )
        return cursor.fetchall()


@pytest.mark.django_db(transaction=True)
def test_existing_observations_land_in_their_month_and_come_back_on_reverse():
    apps = migrate(BEFORE)
    System = apps.get_model("metrics", "System")
    definition = apps.get_model("metrics", "MetricDefinition").objects.create(
        key="latency", version=1, status="active", name="L", unit="s", start_event="a", end_event="b"
    )
    system = System.objects.create(key="old", name="Old")
    workload = apps.get_model("metrics", "Workload").objects.create(
        key="w", name="W", size="small", criticality="core"
    )
    Observation = apps.get_model("metrics", "Observation")
    for i, moment in enumerate(MOMENTS):
        Observation.objects.create(
            definition=definition,
            system=system,
            workload=workload,
            value=float(i),
            unit="s",
            observed_at=moment,
            run_id=f"run-{i}",
        )

    migrate(AFTER)
    assert stored() == [
        ("metrics_observation_y2020m03", "run-0", MOMENTS[0], 0.0),
        ("metrics_observation_y2020m03", "run-1", MOMENTS[1], 1.0),
        ("metrics_observation_y2021m12", "run-2", MOMENTS[2], 2.0),
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_inherits WHERE inhparent = 'metrics_observation'::regclass"
            " AND inhrelid = 'metrics_observation_default'::regclass"
        )
        assert cursor.fetchone() == (1,)

    migrate(BEFORE)
    assert [row[0] for row in stored()] == ["metrics_observation"] * 3
    assert [row[1:] for row in stored()] == [
        (f"run-{i}", moment, float(i)) for i, moment in enumerate(MOMENTS)
    ]

    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    assert len(stored()) == 3
