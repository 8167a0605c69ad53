"""Dimension slicing of GET /api/v1/comparisons/: tag filters, group_by, pooled workloads' sizes."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from scipy import stats

from metrics.models import Observation, Workload
from metrics.partitions import observations_partitions_create, partition_name
from metrics.selectors.comparison.slices import POOLED_WORKLOADS_SQL, pooled_workloads
from tests.explain import plan_nodes_of, rows_read
from tests.pg_stats import observation_rows_read

pytestmark = pytest.mark.perf  # query plans and PostgreSQL's counters over many rows

URL = "/api/v1/comparisons/"
BASE = {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt", "statistic": "mean"}


def add(ref, system, values, *, tags=None, workload="medium", prefix=""):
    """Rows of one system, each tagged with `tags` (a dict, or a function of the index)."""
    start = timezone.now() - timedelta(days=1)
    Observation.objects.bulk_create(
        Observation(
            definition=ref["latency"],
            system=ref[system],
            workload=ref[workload],
            value=value,
            unit="s",
            observed_at=start + timedelta(seconds=i),
            run_id=f"{system}-{prefix}{i}",
            tags=tags(i) if callable(tags) else (tags or {}),
        )
        for i, value in enumerate(values)
    )


@pytest.fixture
def incidents(ref):
    """Legacy and rebuilt rows tagged by severity and cluster: sev1 is slower on rebuilt (worse),
    sev2 faster (better), sev3 has rows on legacy only. Returns each side's values per severity."""
    rng = random.Random(15)
    values = {}
    for system, shift in (
        ("legacy", {"sev1": 1.0, "sev2": 2.0, "sev3": 3.0}),
        ("rebuilt", {"sev1": 1.5, "sev2": 1.0}),
    ):
        for severity, centre in shift.items():
            sample = [rng.gauss(centre, 0.1) for _ in range(60)]
            values[(system, severity)] = sample
            add(
                ref,
                system,
                sample,
                tags=lambda i, severity=severity: {"severity": severity, "cluster": "a" if i % 2 else "b"},
                prefix=severity,
            )
    return values


def get(client, **params):
    return client.get(URL, {**BASE, **params})


def test_one_key_filters_to_its_rows(as_user, viewer, incidents):
    body = get(as_user(viewer), **{"tags.severity": "sev1"}).json()
    assert body["baseline"]["n"] == 60 and body["candidate"]["n"] == 60
    assert body["baseline"]["mean"] == pytest.approx(stats.tmean(incidents[("legacy", "sev1")]))
    assert body["tags"] == {"severity": ["sev1"]}
    assert body["verdict"] == "worse"  # latency, lower is better: 1.5 s against 1.0 s


def test_repeated_values_are_or_within_a_key_and_keys_are_and(as_user, viewer, incidents):
    client = as_user(viewer)
    either = client.get(
        URL + "?metric=latency&baseline=legacy&candidate=rebuilt&tags.severity=sev1&tags.severity=sev2"
    ).json()
    assert either["baseline"]["n"] == 120 and either["candidate"]["n"] == 120
    both = client.get(
        URL + "?metric=latency&baseline=legacy&candidate=rebuilt"
        "&tags.severity=sev1&tags.severity=sev2&tags.cluster=a"
    ).json()
    assert both["baseline"]["n"] == 60 and both["candidate"]["n"] == 60
    expected = sorted(v for s in ("sev1", "sev2") for i, v in enumerate(incidents[("legacy", s)]) if i % 2)
    assert both["baseline"]["min"] == expected[0] and both["baseline"]["max"] == expected[-1]


def test_unknown_key_leaves_both_sides_empty_and_inconclusive(as_user, viewer, incidents):
    body = get(as_user(viewer), **{"tags.nope": "x"}).json()
    assert body["baseline"]["n"] == 0 and body["candidate"]["n"] == 0
    assert body["verdict"] == "insufficient_data"


@pytest.mark.parametrize(
    ("param", "value"),
    [("tags.severity", "x" * 257), ("tags." + "k" * 65, "v"), ("tags.", "v"), ("tags.severity", "a\x00b")],
)
def test_bad_tag_parameter_is_a_400_naming_it(as_user, viewer, ref, param, value):
    response = get(as_user(viewer), **{param: value})
    assert response.status_code == 400
    assert param in str(response.json())


def test_group_by_equals_separate_filtered_comparisons(as_user, viewer, incidents):
    client = as_user(viewer)
    body = get(client, group_by="severity").json()
    assert body["group_by"] == "severity"
    assert [g["value"] for g in body["groups"]] == ["sev1", "sev2"]  # sev3 has no rebuilt rows
    assert body["baseline"]["n"] == 180 and body["candidate"]["n"] == 120  # pooled: every row
    for group in body["groups"]:
        alone = get(client, **{"tags.severity": group["value"]}).json()
        for field in ("baseline", "candidate", "relative_performance", "relative_performance_ci", "verdict"):
            assert group["comparison"][field] == alone[field], field
    verdicts = {g["value"]: g["comparison"]["verdict"] for g in body["groups"]}
    assert verdicts == {"sev1": "worse", "sev2": "better"}


def test_group_by_with_a_filter(as_user, viewer, incidents):
    body = get(as_user(viewer), group_by="cluster", **{"tags.severity": "sev2"}).json()
    assert [g["value"] for g in body["groups"]] == ["a", "b"]
    assert all(g["comparison"]["baseline"]["n"] == 30 for g in body["groups"])


def test_group_by_runs_one_query_whatever_the_groups(as_user, viewer, ref):
    client = as_user(viewer)

    def queries(groups: int) -> list[str]:
        Observation.objects.all().delete()
        for system in ("legacy", "rebuilt"):
            add(
                ref, system, [1.0 + i % 7 for i in range(groups * 10)], tags=lambda i: {"g": f"v{i % groups}"}
            )
        with CaptureQueriesContext(connection) as context:
            body = get(client, group_by="g").json()
        assert len(body["groups"]) == min(groups, 20)
        return [q["sql"] for q in context.captured_queries]

    small, large = queries(2), queries(30)
    assert len(small) == len(large)
    # Both sides and every group come from one read of the rows; no rollup is read.
    assert sum("FROM metrics_observation" in sql for sql in large) == 1
    assert not any("metrics_observationrollup" in sql for sql in large)


def test_groups_are_capped_with_a_warning(as_user, viewer, ref):
    for system in ("legacy", "rebuilt"):
        add(ref, system, [1.0] * 250, tags=lambda i: {"g": f"v{i % 25:02d}"})
    body = get(as_user(viewer), group_by="g").json()
    assert len(body["groups"]) == 20 and body["groups_omitted"] == 5
    assert any("25 values of g" in w for w in body["warnings"])


def test_pooling_workloads_of_different_sizes_warns(as_user, viewer, ref):
    add(ref, "legacy", [1.0] * 40, workload="medium")
    add(ref, "rebuilt", [1.0] * 40, workload="large")
    client = as_user(viewer)
    body = get(client).json()
    assert len(body["warnings"]) == 1
    assert "large: pretrain" in body["warnings"][0] and "medium: finetune" in body["warnings"][0]
    assert get(client, workload="finetune").json()["warnings"] == []
    # The sliced read says the same.
    assert "different sizes" in get(client, group_by="x").json()["warnings"][0]


def test_one_workload_size_pooled_does_not_warn(as_user, viewer, ref):
    add(ref, "legacy", [1.0] * 40)
    add(ref, "rebuilt", [1.0] * 40)
    assert get(as_user(viewer)).json()["warnings"] == []


def test_a_side_over_the_threshold_is_capped_to_its_newest_rows(as_user, viewer, ref, settings):
    settings.ROLLUP_THRESHOLD = 50
    add(ref, "legacy", list(range(80)), tags={"k": "v"})
    add(ref, "rebuilt", list(range(30)), tags={"k": "v"})
    body = get(as_user(viewer), **{"tags.k": "v"}).json()
    assert body["baseline"]["n"] == 50 and body["baseline"]["min"] == 30  # the newest 50: 30 … 79
    assert body["candidate"]["n"] == 30
    assert any("legacy has 80 matching rows" in w for w in body["warnings"])
    assert body["approximate"] is False


def test_the_pooled_workloads_are_probed_one_row_each_not_read_whole(ref):
    """One LIMIT 1 probe per workload and side, never a read of the metric's rows: PostgreSQL chose a
    hash semi-join for EXISTS (226 ms at 1M rows) and, for a bare LIMIT 1, a sequential scan that read
    every row for a workload without any (0.8 s at 10M rows). Rows a scan filters out count as read:
    the scan for the idle workload returns none, which is how a count of returned rows missed it."""
    Workload.objects.create(key="idle", name="No rows", size="small", criticality="peripheral")
    with connection.cursor() as cursor:  # enough rows that reading them looks cheap to a LIMIT 1
        cursor.execute(
            "INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at,"
            " run_id, source, tags) SELECT %s, CASE WHEN i %% 2 = 0 THEN %s ELSE %s END, %s, 1.0, 'ms',"
            " now() - interval '1 second' * i, 'r' || (i / 1000), '', '{}' FROM generate_series(1, 200000) AS i",
            [ref["latency"].pk, ref["legacy"].pk, ref["rebuilt"].pk, ref["medium"].pk],
        )
        cursor.execute("ANALYZE metrics_observation")
        params = {
            "definition": ref["latency"].pk,
            "baseline": ref["legacy"].pk,
            "candidate": ref["rebuilt"].pk,
        }
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + POOLED_WORKLOADS_SQL.format(filters=""), params)
        nodes = plan_nodes_of(cursor.fetchone()[0])
    limits = [node for node in nodes if node["Node Type"] == "Limit"]
    assert limits and all(node["Actual Rows"] <= 1 for node in limits)
    probes = [node for node in nodes if node.get("Relation Name", "").startswith("metrics_observation")]
    assert probes and {node["Node Type"] for node in probes} <= {"Index Scan", "Index Only Scan"}
    # A row or so per workload and side, not the 200,000 stored; rows filtered out count as read (a
    # scan for the idle workload returns none of them).
    assert sum(rows_read(node) for node in probes) <= 10


def test_the_pooled_workloads_probe_reads_one_row_under_statistics_taken_early_in_the_month(ref):
    """Statistics taken when the month's partition held one row make every plan look cheap, and the
    probe read the metric's rows of the month through the time index and sorted them (a million rows
    read for the 200,000 stored): it must not sort, so only the primary key can answer it. The month
    is one no other test has touched, made here, so its statistics are only what this test leaves."""
    month = datetime(2040, 1, 1, tzinfo=UTC)
    observations_partitions_create(now=month, months_ahead=0)
    Workload.objects.create(key="idle", name="No rows", size="small", criticality="peripheral")
    fill = (
        "INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at,"
        " run_id, source, tags) SELECT %s, CASE WHEN i %% 2 = 0 THEN %s ELSE %s END, %s, 1.0, 's',"
        " %s + interval '1 millisecond' * i, 'r' || (i / 1000), '', '{}' FROM generate_series(%s, %s) AS i"
    )
    key = [ref["latency"].pk, ref["legacy"].pk, ref["rebuilt"].pk, ref["medium"].pk, month]
    with connection.cursor() as cursor:
        cursor.execute(fill, [*key, 1, 1])
        cursor.execute(f"ANALYZE {partition_name(month)}")  # early in the month: one row
        cursor.execute(fill, [*key, 2, 200_000])
    before = observation_rows_read()
    found = pooled_workloads(
        definition=ref["latency"],
        baseline=ref["legacy"],
        candidate=ref["rebuilt"],
        since=month,
        until=datetime(2040, 2, 1, tzinfo=UTC),
    )
    assert [key for key, _ in found] == [ref["medium"].key]
    assert observation_rows_read() - before <= 4  # a row per workload with rows and side, at most
    with connection.cursor() as cursor:  # inside the test's transaction, the setting was undone
        cursor.execute("SHOW enable_sort")
        assert cursor.fetchone() == ("on",)
