"""The Citus mode on a real cluster (`make test-citus`): what migration 0018 distributed, and that it says
plainly that it cannot be reversed there."""

from __future__ import annotations

import re
from importlib import import_module

import pytest
from django.db import connection
from django.db.migrations.exceptions import IrreversibleError
from django.test.utils import CaptureQueriesContext

from metrics.selectors import comparison_compute
from program import services
from program.models import Gate
from tests.explain import task_counts
from tests.program.factories import program_with_canary_rows

pytestmark = [pytest.mark.citus_only, pytest.mark.django_db]

DISTRIBUTED = {
    "metrics_observation",
    "metrics_observationrollup",
    "metrics_rollupdelta",
    "metrics_rollupstale",
}


def citus_tables() -> dict[str, tuple[str, str | None, int]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name::text, citus_table_type, distribution_column, colocation_id FROM citus_tables"
        )
        return {name: (kind, column, colocation) for name, kind, column, colocation in cursor.fetchall()}


def test_observations_and_rollups_are_distributed_by_metric_on_one_colocation_group():
    tables = citus_tables()
    distributed = {name: value for name, value in tables.items() if value[0] == "distributed"}
    # Each monthly partition is a distributed table of its own, on the parent's shards.
    assert set(distributed) >= DISTRIBUTED
    assert {column for _, column, _ in distributed.values()} == {"definition_id"}
    assert len({colocation for _, _, colocation in distributed.values()}) == 1


def test_the_months_dropped_are_a_reference_table_and_the_registry_stays_local():
    tables = citus_tables()
    assert tables["metrics_observationmonthdropped"][0] == "reference"
    for local in ("metrics_metricdefinition", "metrics_system", "metrics_workload", "metrics_histogrampoint"):
        assert local not in tables


def test_the_shards_lie_on_both_workers():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT nodeport FROM citus_shards WHERE table_name = 'metrics_observation'::regclass"
        )
        ports = {port for (port,) in cursor.fetchall()}
    assert len(ports) == 2


def test_migrating_back_past_the_distribution_is_refused_with_the_reason():
    # Its reverse function, not a migration run: that would unapply every later migration first.
    distribution = import_module("metrics.migrations.0018_citus_distribution")
    with pytest.raises(IrreversibleError, match="undistribute_table refuses identity columns"):
        distribution.undistribute(apps=None, schema_editor=None)


# --- single-shard plans: what one metric's comparison and a gate evaluation ask of the cluster ----------


def distributed_queries(run) -> list[tuple[str, list[int]]]:
    """Each query `run` sent that read the distributed tables, with its jobs' task counts."""
    with CaptureQueriesContext(connection) as captured:
        run()
    queries = [q["sql"] for q in captured.captured_queries if DISTRIBUTED_NAMES.search(q["sql"])]
    # CaptureQueriesContext keeps the SQL with its parameters inlined: EXPLAIN it as it ran.
    return [
        (sql, task_counts(sql, None))
        for sql in queries
        if sql.lstrip().upper().startswith(("SELECT", "(", "WITH"))
    ]


DISTRIBUTED_NAMES = re.compile(r"metrics_observation\b|metrics_observation\"|metrics_observationrollup")


@pytest.fixture
def gate_world(db, lead, settings):
    settings.ROLLUP_THRESHOLD = 30  # 60 rows a side: the rollup path
    return program_with_canary_rows(lead)


@pytest.mark.parametrize("threshold", [30, 10_000], ids=["rollups", "rows"])
def test_a_one_metric_comparison_touches_one_shard(gate_world, settings, threshold):
    settings.ROLLUP_THRESHOLD = threshold

    def compare():
        for statistic in ("p50", "mean", "distribution"):
            comparison_compute(
                definition=gate_world["step"],
                baseline=gate_world["legacy"],
                candidate=gate_world["rebuilt"],
                statistic=statistic,
            )

    queries = distributed_queries(compare)
    assert queries
    for sql, counts in queries:
        assert counts and set(counts) == {1}, sql


def test_a_gate_evaluation_touches_one_shard_per_query(gate_world):
    def evaluate():
        services.gate_evaluate(gate=Gate.objects.get(phase__kind="canary", kind="exit"))

    queries = distributed_queries(evaluate)
    assert queries
    for sql, counts in queries:
        assert counts and set(counts) == {1}, sql


def test_the_list_across_metrics_asks_every_shard(gate_world, settings):
    # The counterpart: without a metric, a read fans out to every shard and merges (docs/scaling.md).
    counts = task_counts("SELECT * FROM metrics_observation ORDER BY observed_at DESC LIMIT 10", None)
    assert settings.CITUS_SHARD_COUNT in counts
