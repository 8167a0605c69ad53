"""Migration metrics 0013: sources from before point kinds become `aggregate` (what a query_range point
of a rate(), avg() or histogram_quantile() is), so one feeding a per_step metric shows as disagreeing."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgresql_only(reason="migrates back past metrics 0018, which Citus cannot reverse"),
]
BEFORE = [("metrics", "0013_otlp_streams_and_histogram_points")]
AFTER = [("metrics", "0014_pull_source_point_kind")]


def test_existing_sources_become_aggregates():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    definition = old.get_model("metrics", "MetricDefinition").objects.create(
        key="step-time",
        version=1,
        name="Step",
        unit="s",
        direction="lower_is_better",
        statistic="p50",
        sampling="per_step",
        start_event="a",
        end_event="b",
        owner_team="t",
        status="active",
    )
    system = old.get_model("metrics", "System").objects.create(key="rebuilt", name="Rebuilt")
    old.get_model("metrics", "PullSource").objects.create(
        definition=definition, system=system, base_url="http://prom:9090", query="avg(x)"
    )
    with connection.cursor() as cursor:  # the rows' deferred checks now: ALTER TABLE waits for none
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    new = executor.loader.project_state(AFTER).apps

    assert list(new.get_model("metrics", "PullSource").objects.values_list("point_kind", flat=True)) == [
        "aggregate"
    ]
