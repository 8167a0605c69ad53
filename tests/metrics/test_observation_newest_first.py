"""The newest-first list without `metric` reads the observation_utc_time index (metrics.api.observations
NewestFirst): every page, forwards and back, holds the plain ORDER BY query's rows in order whatever the
rows' spread in time — future rows, ties, months apart, years apart in DEFAULT — rows arriving between
pages are neither lost nor repeated, a page reads its rows from the index starting at its cursor or its
window's edge (no sort of the table), and a metric's page never reads that index."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from metrics.models import Observation
from metrics.partitions import month_add, month_start, observations_partitions_create, partitions_existing
from tests.explain import plan_nodes_of, rows_read
from tests.metrics.factories import reference_data
from tests.metrics.test_observation_page import walk

SINGLE_NODE_PLAN = pytest.mark.postgresql_only(
    reason="asserts the single-node planner's index per partition; on Citus each shard plans for its own"
    " few rows (tests/citus asserts the distributed plans)"
)
pytestmark = pytest.mark.perf  # query plans and PostgreSQL's counters over many rows

URL = "/api/v1/observations/"
# Where the rows lie from now: ahead (a clock ahead), within the first band, across band edges, in
# earlier months (their partitions made below) and years back (DEFAULT); some moments shared.
OFFSETS = [
    timedelta(days=3),
    timedelta(minutes=-1),
    timedelta(minutes=-10),
    timedelta(minutes=-10),
    timedelta(minutes=-59, seconds=-59),
    timedelta(hours=-1, seconds=-1),
    timedelta(hours=-7),
    timedelta(hours=-9),
    timedelta(days=-2),
    timedelta(days=-2),
    timedelta(days=-5),
    timedelta(days=-25),
    timedelta(days=-45),
    timedelta(days=-100),
    timedelta(days=-400),
    timedelta(days=-4000),
]
# Without a bound the list across metrics reads the last 7 days only: these walks ask for every row.
EVER = {"since": "1990-01-01T00:00:00Z"}


def store(ref, moments: list[datetime], run: str = "r") -> None:
    Observation.objects.bulk_create(
        Observation(
            definition=ref[("latency", "throughput")[i % 2]],
            system=ref[("legacy", "rebuilt")[i % 3 % 2]],
            workload=ref["medium"],
            value=i / 3,
            unit="ms",
            observed_at=moment,
            run_id=f"{run}{i % 2}",
        )
        for i, moment in enumerate(moments)
    )


@pytest.fixture
def spread(db):
    from tests.metrics.factories import definition

    ref = reference_data()
    ref["throughput"] = definition(key="throughput", unit="ms")
    now = timezone.now().replace(microsecond=0)
    observations_partitions_create(since=month_add(month_start(now), -4))
    store(ref, [now + offset for offset in OFFSETS])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE metrics_observation")
    return ref


@pytest.fixture
def client(as_user, viewer):
    return as_user(viewer)


@pytest.mark.parametrize("size", [1, 3, 7])
def test_every_page_forwards_and_back_holds_the_plain_querys_rows(client, spread, size):
    pages = walk(client, {**EVER, "page_size": size})
    rows = [row for page in pages for row in page["results"]]
    assert len(rows) == len(OFFSETS)
    assert rows[0]["observed_at"] > timezone.now().isoformat()  # the row ahead of now comes first


@pytest.mark.parametrize(
    "params",
    [
        {"system": "rebuilt"},
        {"until": "2030-01-01T00:00:00Z"},
        {"since": "2020-01-01T00:00:00Z"},
        {"workload": "finetune", "source": ""},
    ],
)
def test_filtered_pages_hold_the_plain_querys_rows(client, spread, params):
    walk(client, {**params, "page_size": 2})


def test_a_window_in_the_past(client, spread):
    until = (timezone.now() - timedelta(days=30)).isoformat()
    pages = walk(client, {"until": until, "page_size": 2})
    assert sum(len(page["results"]) for page in pages) == 4  # -45 d, -100 d, -400 d, -4000 d


def test_rows_arriving_between_pages_are_neither_lost_nor_repeated(client, spread):
    first = client.get(URL, {**EVER, "page_size": 4}).json()
    now = timezone.now()
    store(
        spread, [now + timedelta(seconds=5), now - timedelta(days=3), now - timedelta(days=4000)], run="late"
    )
    seen = [(r["observed_at"], r["metric"], r["system"], r["run_id"]) for r in first["results"]]
    url = first["next"]
    while url:
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.json()
        seen.extend((r["observed_at"], r["metric"], r["system"], r["run_id"]) for r in body["results"])
        url = body["next"]
    assert len(seen) == len(set(seen)) == len(OFFSETS) + 2  # the two older arrivals, not the newer one
    moments = [datetime.fromisoformat(r[0]) for r in seen]
    assert moments == sorted(moments, reverse=True)


def plan_nodes(sql: str) -> list[dict]:
    """Every node of the statement's executed plan."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        return plan_nodes_of(cursor.fetchone()[0])


def partitioned_index(name: str) -> set[str]:
    """A partitioned index and its partitions' own indexes."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid"
            " WHERE h.inhparent = %s::regclass",
            [name],
        )
        return {name for (name,) in cursor.fetchall()} | {name}


def utc_time_indexes() -> set[str]:
    return partitioned_index("observation_utc_time")


def page_sql(client, url: str, query: dict | None = None) -> str:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, query)
    assert response.status_code == 200
    (sql,) = [q["sql"] for q in queries.captured_queries if "metrics_observation" in q["sql"]]
    return sql


def bulk(ref, count: int) -> None:
    """`count` rows over the 20 days before now, as ingest leaves a month's partition; analysed."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at,"
            " run_id, source, tags) SELECT %s, %s, %s, i, 'ms', now() - interval '20 days' * i / %s,"
            " 'bulk', '', '{}' FROM generate_series(1, %s) AS i",
            [ref["latency"].pk, ref["legacy"].pk, ref["medium"].pk, count, count],
        )
        cursor.execute("ANALYZE metrics_observation")


@SINGLE_NODE_PLAN
def test_a_page_across_metrics_reads_the_index_from_its_cursor(client, spread):
    bulk(spread, 20_000)  # enough that reading the table would show
    first = client.get(URL, {"page_size": 3}).json()
    nodes = plan_nodes(page_sql(client, first["next"]))

    scans = [node for node in nodes if "Relation Name" in node]
    assert scans and all(node["Node Type"] == "Index Scan" for node in scans), [n["Node Type"] for n in scans]
    assert {node["Index Name"] for node in scans} <= utc_time_indexes()
    assert not [node for node in nodes if node["Node Type"] == "Sort"]  # only ties are sorted (Incremental)
    assert sum(rows_read(node) for node in scans) <= 3 + 1 + len(scans)  # the page, not the table

    # The cursor lies a few minutes back: the months after it are pruned.
    later = {
        name
        for name in partitions_existing()
        if "_y" in name and name > f"metrics_observation_y{timezone.now():%Ym%m}"
    }
    assert later
    assert not later & {node["Relation Name"] for node in scans}


def test_a_metrics_page_reads_its_own_index_not_the_utc_time_one(client, spread):
    bulk(spread, 20_000)
    nodes = plan_nodes(page_sql(client, URL, {"metric": "latency", "page_size": 3}))
    used = {node.get("Index Name") for node in nodes if "Relation Name" in node}
    assert used and not used & utc_time_indexes()


def test_every_partition_has_the_utc_time_index_even_one_made_later(db):
    made = observations_partitions_create(now=datetime(2040, 1, 1, tzinfo=UTC))
    assert made
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indrelid::regclass::text FROM pg_inherits h JOIN pg_index i ON i.indexrelid = h.inhrelid"
            " WHERE h.inhparent = 'observation_utc_time'::regclass"
        )
        children = {name for (name,) in cursor.fetchall()}
    assert children == set(partitions_existing())


def test_a_page_across_metrics_is_one_query_whatever_its_window(client, spread):
    bulk(spread, 2_000)  # the last 20 days

    def queries(query: dict) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(URL, query).status_code == 200
        return len([q for q in captured.captured_queries if "metrics_observation" in q["sql"]])

    assert queries({"page_size": 50}) == 1
    until = (timezone.now() - timedelta(days=40)).isoformat()
    assert queries({"page_size": 5, "until": until, "since": "2000-01-01T00:00:00Z"}) == 1
    assert queries({"page_size": 5, "until": until}) == 1


def assert_reads_the_page_from_the_utc_time_index(nodes: list[dict], limit: int) -> None:
    """The time index read for the page, not the table."""
    scans = [node for node in nodes if "Relation Name" in node]
    assert scans and {node["Index Name"] for node in scans} <= utc_time_indexes()
    assert not [node for node in nodes if node["Node Type"] == "Sort"]  # only ties are sorted (Incremental)
    assert sum(rows_read(node) for node in scans) <= limit + len(scans)


@SINGLE_NODE_PLAN
def test_the_first_page_across_metrics_reads_the_utc_time_index(client, spread):
    bulk(spread, 20_000)
    assert_reads_the_page_from_the_utc_time_index(
        plan_nodes(page_sql(client, URL, {"page_size": 3})), limit=4
    )


@SINGLE_NODE_PLAN
def test_a_window_in_the_past_across_metrics_reads_the_index_from_its_edge(client, spread):
    """Its bounds are written on the indexed expression too, so the scan starts at `until`, not at the
    newest row of its month; the months after `until` are pruned."""
    bulk(spread, 20_000)
    until = timezone.now() - timedelta(days=3)  # within the bulk rows: most of them lie after it
    since = timezone.now() - timedelta(days=10)
    for window in ({"until": until.isoformat()}, {"since": since.isoformat(), "until": until.isoformat()}):
        nodes = plan_nodes(page_sql(client, URL, {**window, "page_size": 3}))
        assert_reads_the_page_from_the_utc_time_index(nodes, limit=4)
        later = {
            name
            for name in partitions_existing()
            if "_y" in name and name > f"metrics_observation_y{until:%Ym%m}"
        }
        assert later
        assert not later & {node["Relation Name"] for node in nodes if "Relation Name" in node}


@SINGLE_NODE_PLAN
def test_a_metrics_first_page_reads_the_metrics_time_index(client, spread):
    """metric, system and workload, each looked up by key: the page reads observation_definition_time."""
    bulk(spread, 20_000)
    system, workload = spread["legacy"].key, spread["medium"].key
    query = {"metric": "latency", "system": system, "workload": workload, "page_size": 3}
    nodes = plan_nodes(page_sql(client, URL, query))
    scans = [node for node in nodes if node.get("Relation Name", "").startswith("metrics_observation")]
    assert scans and {node.get("Index Name") for node in scans} <= partitioned_index(
        "observation_definition_time"
    )
    assert sum(rows_read(node) for node in scans) <= 4 + len(scans)  # the page, not the metric's rows
