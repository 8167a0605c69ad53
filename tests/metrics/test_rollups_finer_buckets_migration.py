"""Migration metrics 0016: rollups bucketed with the old γ (0.5 %) would be read with the new one
(0.1 %), so they and their deltas go, and every day with rows is marked stale for the refresh."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from metrics.models import ObservationRollup, RollupStale
from metrics.rollups.maintain import rollups_refresh_stale
from metrics.rollups.sketch import LOG_GAMMA

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgresql_only(reason="migrates back past metrics 0018, which Citus cannot reverse"),
]
# In the test's transaction: PostgreSQL rolls the migrations back too
BEFORE = [("metrics", "0015_rollup_deltas")]
AFTER = [("metrics", "0016_rollups_finer_buckets")]


def test_old_rollups_are_dropped_and_their_days_recomputed_with_the_new_buckets():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    definition = old.get_model("metrics", "MetricDefinition").objects.create(
        key="step-time", version=1, name="Step", unit="s", direction="lower_is_better", statistic="p50",
        sampling="per_step", start_event="a", end_event="b", owner_team="t", status="active",
    )  # fmt: skip
    system = old.get_model("metrics", "System").objects.create(key="rebuilt", name="Rebuilt")
    workload = old.get_model("metrics", "Workload").objects.create(
        key="llm", name="LLM", size="medium", criticality="core"
    )
    with connection.cursor() as cursor:
        for moment, value in (
            (datetime(2026, 11, 2, 10, tzinfo=UTC), 2.0),
            (datetime(2026, 11, 3, 23, tzinfo=UTC), 3.0),
        ):
            cursor.execute(
                "INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at,"
                " run_id, source, tags) VALUES (%s, %s, %s, %s, 's', %s, 'r', '', '{}'::jsonb)",
                [definition.pk, system.pk, workload.pk, value, moment],
            )
    old.get_model("metrics", "ObservationRollup").objects.create(  # keyed by the old γ: bucket 70 holds 2.0
        definition_id=definition.pk, system_id=system.pk, workload_id=workload.pk, day=date(2026, 11, 2),
        n=1, total=2.0, m2=0.0, sumsq=4.0, min=2.0, max=2.0, bins={"70": 1},
    )  # fmt: skip

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    assert not ObservationRollup.objects.exists()
    executor = MigrationExecutor(connection)  # and the rest of the graph: the refresh uses later tables
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert sorted(RollupStale.objects.values_list("day", flat=True)) == [date(2026, 11, 2), date(2026, 11, 3)]
    assert rollups_refresh_stale() == 2
    rollup = ObservationRollup.objects.get(day=date(2026, 11, 2))
    assert rollup.bins == {str(math.ceil(math.log(2.0) / LOG_GAMMA)): 1}
