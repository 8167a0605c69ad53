"""Observations are partitioned by month: partitions are made ahead, DEFAULT is drained into them, and
reads by time touch only the months they ask for, through the time-leading index."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.conf import settings
from django.db import connection

from core.citus import citus_mode
from metrics.models import Observation
from metrics.partitions import (
    DEFAULT_PARTITION,
    MONTHS_AHEAD,
    month_add,
    month_start,
    observations_partitions_create,
    partition_name,
    partitions_existing,
)
from metrics.tasks import observations_partitions_create as partitions_task
from tests.explain import plan_nodes_of, unsharded_name
from tests.metrics.factories import reference_data

SINGLE_NODE_PLAN = pytest.mark.postgresql_only(
    reason="asserts the single-node planner's index per partition; on Citus each shard plans for its own"
    " few rows (tests/citus asserts the distributed plans)"
)
pytestmark = pytest.mark.perf  # query plans and PostgreSQL's counters over many rows

JULY_2031 = datetime(2031, 7, 1, tzinfo=UTC)


def months(*pairs: tuple[int, int]) -> list[str]:
    return [partition_name(datetime(year, month, 1, tzinfo=UTC)) for year, month in pairs]


def months_due(now: datetime) -> list[str]:
    """This month's partition and the next MONTHS_AHEAD (three) months'."""
    return [partition_name(month_add(month_start(now), ahead)) for ahead in range(MONTHS_AHEAD + 1)]


def partition_of(**natural_key) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tableoid::regclass::text FROM metrics_observation"
            " WHERE definition_id = %(definition)s AND run_id = %(run_id)s",
            natural_key,
        )
        name = cursor.fetchone()[0]
    # On Citus the row lies in a shard of the partition, whose name ends in the shard's id.
    return unsharded_name(name) if citus_mode() else name


def observe(ref, at: datetime, run_id: str) -> None:
    Observation.objects.create(
        definition=ref["latency"],
        system=ref["legacy"],
        workload=ref["medium"],
        value=1.0,
        unit="s",
        observed_at=at,
        run_id=run_id,
    )


def test_creates_this_month_and_three_ahead_once(db):
    created = observations_partitions_create(now=datetime(2031, 7, 15, 9, tzinfo=UTC))
    assert created == months((2031, 7), (2031, 8), (2031, 9), (2031, 10))
    assert observations_partitions_create(now=datetime(2031, 7, 31, 23, tzinfo=UTC)) == []
    assert observations_partitions_create(now=datetime(2031, 8, 1, tzinfo=UTC)) == months((2031, 11))


# Its own transactions, as the beat task and the command run it: on Citus, moving DEFAULT's rows needs a
# transaction that has not read many shards in parallel yet (metrics.partitions).
def test_rows_waiting_in_default_move_into_their_new_partition(transactional_db):
    ref = reference_data()
    observe(ref, datetime(2031, 9, 10, tzinfo=UTC), "early")
    observe(ref, datetime(2031, 12, 31, 23, 59, tzinfo=UTC), "later")
    assert partition_of(definition=ref["latency"].pk, run_id="early") == DEFAULT_PARTITION

    observations_partitions_create(now=JULY_2031)

    assert partition_of(definition=ref["latency"].pk, run_id="early") == partition_name(
        datetime(2031, 9, 1, tzinfo=UTC)
    )
    assert partition_of(definition=ref["latency"].pk, run_id="later") == DEFAULT_PARTITION
    assert Observation.objects.count() == 2


def test_the_beat_task_recreates_a_missing_partition(db):
    assert settings.CELERY_BEAT_SCHEDULE["observations-partitions-create"]["task"] == (
        "metrics.tasks.observations_partitions_create"
    )
    now = datetime.now(UTC)
    last = partition_name(month_add(month_start(now), MONTHS_AHEAD))
    # The migration made its month and the next three; a run that began the month before (a test
    # database migrated on the 30th, this test reached on the 1st) is one month short, and only that.
    assert set(partitions_task()) <= {last}
    assert set(months_due(now)) <= set(partitions_existing())

    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {last}")
    assert partitions_task() == [last]
    assert partitions_task() == []


# --- reads by time -------------------------------------------------------------------------------

# Four months (July–October 2031) of one observation every 30 minutes for each of two metrics × four
# systems; the 30-day window 29 August – 28 September touches two of them, August barely.
FILL = """
INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)
SELECT d, s, %(workload)s, random(), 's', t, 'run-' || to_char(t, 'YYYYMMDD'), '', '{}'
FROM unnest(%(definitions)s::bigint[]) AS d, unnest(%(systems)s::bigint[]) AS s,
     generate_series('2031-07-01'::timestamptz, '2031-10-31 23:30'::timestamptz, interval '30 minutes') AS t
"""
SINCE, UNTIL = datetime(2031, 8, 29, tzinfo=UTC), datetime(2031, 9, 28, tzinfo=UTC)


@pytest.fixture
def four_months(db):
    from metrics.models import System
    from tests.metrics.factories import definition

    ref = reference_data()
    other = definition(key="throughput", unit="s")
    systems = [ref["legacy"], ref["rebuilt"]] + [
        System.objects.create(key=f"extra-{i}", name=f"Extra {i}") for i in range(2)
    ]
    observations_partitions_create(now=JULY_2031)
    with connection.cursor() as cursor:
        cursor.execute(
            FILL,
            {
                "workload": ref["medium"].pk,
                "definitions": [ref["latency"].pk, other.pk],
                "systems": [system.pk for system in systems],
            },
        )
        cursor.execute("ANALYZE metrics_observation")
    return ref


def plan_scans(sql: str, params=None) -> list[tuple[str, str, str]]:
    """(node type and direction, relation, index) of every scan in the plan PostgreSQL chooses."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        nodes = plan_nodes_of(cursor.fetchone()[0])
    return [
        (
            " ".join(filter(None, [node["Node Type"], node.get("Scan Direction")])),
            node.get("Relation Name", ""),
            node.get("Index Name", ""),
        )
        for node in nodes
        if "Relation Name" in node or "Index Name" in node  # a bitmap's index scan names no relation
    ]


def time_index_children() -> dict[str, str]:
    """The time-leading index's copy on each partition: {index: partition}."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indexrelid::regclass::text, i.indrelid::regclass::text FROM pg_inherits h"
            " JOIN pg_index i ON i.indexrelid = h.inhrelid"
            " WHERE h.inhparent = 'observation_definition_time'::regclass"
        )
        return dict(cursor.fetchall())


@SINGLE_NODE_PLAN
def test_a_comparison_window_reads_only_its_months_and_the_edge_month_by_time(four_months):
    from metrics.selectors.comparison.sql import SAMPLES_SQL, window_filters

    ref = four_months
    filters, params = window_filters(None, SINCE, UNTIL)
    params.update(definition=ref["latency"].pk, baseline=ref["legacy"].pk, candidate=ref["rebuilt"].pk)

    scans = plan_scans(SAMPLES_SQL.format(filters=filters), params)

    assert {relation for _, relation, _ in scans} - {""} == set(months((2031, 8), (2031, 9)))
    # August holds one day of the window: it is read through the time index, not in full. (Index-only
    # once autovacuum has set the visibility map; a bitmap over the same index before.)
    august = partition_name(datetime(2031, 8, 1, tzinfo=UTC))
    by_time = time_index_children()
    assert august in {by_time.get(index) for _, _, index in scans}
    assert ("Seq Scan", august, "") not in scans


@SINGLE_NODE_PLAN
def test_the_newest_first_list_of_a_window_reads_its_months_backwards_by_time(four_months, as_user, viewer):
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        response = as_user(viewer).get(
            "/api/v1/observations/",
            {"metric": "latency", "since": SINCE.isoformat(), "until": UNTIL.isoformat(), "page_size": 100},
        )
    assert response.status_code == 200 and len(response.json()["results"]) == 100
    (page_sql,) = [
        q["sql"] for q in queries.captured_queries if "FROM metrics_observation " in q["sql"].replace('"', "")
    ]

    scans = plan_scans(page_sql)  # the metric was looked up by key beforehand

    assert {relation for _, relation, _ in scans} <= set(months((2031, 8), (2031, 9)))
    assert {(node, index in time_index_children()) for node, _, index in scans} == {
        ("Index Scan Backward", True)  # newest first, no sort of the window
    }


def test_the_command_makes_past_months_too_and_refuses_a_bad_month(db):
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command("observations_partitions_create", "--since", "2019-11", "--ahead", "0", stdout=out)
    assert "created metrics_observation_y2019m11" in out.getvalue()
    assert "created metrics_observation_y2020m01" in out.getvalue()
    assert partition_name(datetime(2019, 11, 1, tzinfo=UTC)) in partitions_existing()
    with pytest.raises(CommandError, match="--since: '2019-13' is not a month"):
        call_command("observations_partitions_create", "--since", "2019-13")
