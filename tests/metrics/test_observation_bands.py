"""The newest-first list without `metric` reads time bands nearest its cursor first
(metrics.observation_bands): every page, forwards and back, is the plain ORDER BY query's page
whatever the rows' spread in time — future rows, ties, months apart, years apart in DEFAULT — rows
arriving between pages are neither lost nor repeated, and a page of recent rows reads only its
first bands, through the BRIN index every partition has."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from metrics.models import Observation
from metrics.partitions import month_add, month_start, observations_partitions_create, partitions_existing
from tests.metrics.factories import reference_data
from tests.metrics.test_observation_page import reference_page

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


def walk(client, query: dict) -> list[dict]:
    """Every page forwards, then back from the last, each checked against the plain path's bytes."""
    url, pages, last = URL, [], None
    while url:
        response = client.get(url, query)
        assert response.status_code == 200
        assert response.content == reference_page(url, query), (url, query)
        last = response.json()
        pages.append(last)
        url, query = last["next"], None
    url = last["previous"]
    while url:
        response = client.get(url)
        assert response.content == reference_page(url, None), url
        url = response.json()["previous"]
    return pages


@pytest.mark.parametrize("size", [1, 3, 7])
def test_every_page_forwards_and_back_is_the_plain_querys(client, spread, size):
    pages = walk(client, {"page_size": size})
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
def test_filtered_pages_are_the_plain_querys(client, spread, params):
    walk(client, {**params, "page_size": 2})


def test_a_window_in_the_past_starts_its_bands_at_until(client, spread):
    until = (timezone.now() - timedelta(days=30)).isoformat()
    pages = walk(client, {"until": until, "page_size": 2})
    assert sum(len(page["results"]) for page in pages) == 4  # -45 d, -100 d, -400 d, -4000 d


def test_a_far_until_starts_the_bands_at_now(client, spread):
    with CaptureQueriesContext(connection) as queries:
        body = client.get(URL, {"until": "2100-01-01T00:00:00Z", "page_size": 3}).json()
    assert len(body["results"]) == 3
    (page_sql,) = [q["sql"] for q in queries.captured_queries if "metrics_observation" in q["sql"]]
    loops = [band["Actual Loops"] for band in analyzed_plan(page_sql)["Plans"][0]["Plans"]]
    assert loops[0] == 1 and loops[1:] == [0] * (len(loops) - 1)


def test_rows_arriving_between_pages_are_neither_lost_nor_repeated(client, spread):
    first = client.get(URL, {"page_size": 4}).json()
    now = timezone.now()
    store(
        spread, [now + timedelta(seconds=5), now - timedelta(days=3), now - timedelta(days=4000)], run="late"
    )
    seen = [(r["observed_at"], r["metric"], r["system"], r["run_id"]) for r in first["results"]]
    url = first["next"]
    while url:
        response = client.get(url)
        assert response.content == reference_page(url, None), url
        body = response.json()
        seen.extend((r["observed_at"], r["metric"], r["system"], r["run_id"]) for r in body["results"])
        url = body["next"]
    assert len(seen) == len(set(seen)) == len(OFFSETS) + 2  # the two older arrivals, not the newer one
    moments = [datetime.fromisoformat(r[0]) for r in seen]
    assert moments == sorted(moments, reverse=True)


def analyzed_plan(sql: str) -> dict:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0]
    return (plan[0] if isinstance(plan, list) else plan)["Plan"]


def test_a_page_of_recent_rows_reads_only_its_first_bands(client, spread):
    with CaptureQueriesContext(connection) as queries:
        body = client.get(URL, {"page_size": 3}).json()
    assert len(body["results"]) == 3  # +3 days, -1 min, -10 min: the first band holds them all
    (page_sql,) = [q["sql"] for q in queries.captured_queries if "metrics_observation" in q["sql"]]

    append = analyzed_plan(page_sql)["Plans"][0]
    assert append["Node Type"] == "Append"
    loops = [band["Actual Loops"] for band in append["Plans"]]
    assert loops[0] == 1 and loops[1:] == [0] * (len(loops) - 1)  # the later bands never ran

    # The first band reads this month's partition, the ones ahead and DEFAULT: older months are pruned.
    relations = set()

    def walk_plan(node):
        if "Relation Name" in node:
            relations.add(node["Relation Name"])
        for child in node.get("Plans", []):
            walk_plan(child)

    walk_plan(append["Plans"][0])
    this_month = f"metrics_observation_y{timezone.now():%Ym%m}"
    older = {name for name in partitions_existing() if "_y" in name and name < this_month}
    assert older  # the fixture made the four months before this one
    assert relations and not relations & older


def brin_children() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indrelid::regclass::text, am.amname FROM pg_inherits h"
            " JOIN pg_index i ON i.indexrelid = h.inhrelid JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_am am ON am.oid = c.relam WHERE h.inhparent = 'observation_time_brin'::regclass"
        )
        return dict(cursor.fetchall())


def test_every_partition_has_the_brin_index_even_one_made_later(db):
    made = observations_partitions_create(now=datetime(2040, 1, 1, tzinfo=UTC))
    assert made
    children = brin_children()
    assert set(children) == set(partitions_existing())
    assert set(children.values()) == {"brin"}
