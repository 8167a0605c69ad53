"""The Prometheus-style query API (program/api/prometheus.py) read by a real Prometheus HTTP API client
someone else wrote, prometheus-api-client, against the live server with a bearer token: the values are
the comparison chart's selector's for the same rows, and what numpy computes from those rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import numpy as np
import pytest
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect

from metrics.models import Observation
from metrics.public import rollups_rebuild
from metrics.selectors import ComparisonQuery, comparison_series
from tests.conftest import api_token
from tests.program.grafana_world import build_world

# Days a rollups read spans: whole days besides today's.
DAYS_READ = 4
SELECTOR = 'rebuild_tracker_observation{{metric="step-time", program="rebuild", stat=~"{stats}"}}'


@pytest.fixture
def world(transactional_db):
    return build_world()


def connect(live_server, token: str, method: str = "GET") -> PrometheusConnect:
    return PrometheusConnect(
        url=f"{live_server.url}/api/prom", headers={"Authorization": f"Bearer {token}"}, method=method
    )


def chart_points(
    world, side: str, statistic: str, *, since, until, bucket, rollups=False
) -> dict[float, float]:
    """What the comparison page's chart shows for the same series: {bucket start (s): value}."""
    query = ComparisonQuery(
        definition=world.step_time,
        baseline=world.ref["legacy"],
        candidate=world.ref["rebuilt"],
        workload=None,
        since=since,
        until=until,
        statistic=None,
        alpha=0.05,
        min_samples=30,
        tag_filters={},
        group_by=None,
    )
    series = comparison_series(query, statistic=statistic, rollups=rollups, bucket=bucket)
    return {at.timestamp(): value for at, value in getattr(series, side)}


def by_labels(result: list[dict]) -> dict[tuple[str, str], dict]:
    return {(s["metric"]["side"], s["metric"]["stat"]): s for s in result}


def rows_of(world, system: str, since: datetime, until: datetime) -> np.ndarray:
    return np.array(
        Observation.objects.filter(
            definition=world.step_time,
            system=world.ref[system],
            observed_at__gte=since,
            observed_at__lt=until,
        ).values_list("value", flat=True)
    )


def test_an_hourly_range_gives_each_step_its_hour_as_the_comparison_chart_reads_it(live_server, world):
    prom = connect(live_server, world.viewer_token)
    start, end = world.now - timedelta(days=2), world.now
    result = prom.custom_query_range(SELECTOR.format(stats="p50|p95"), start, end, step="1h")
    series = by_labels(result)
    assert sorted(series) == [
        ("baseline", "p50"),
        ("baseline", "p95"),
        ("candidate", "p50"),
        ("candidate", "p95"),
    ]
    labels = series[("candidate", "p95")]["metric"]
    assert labels == {
        "__name__": "rebuild_tracker_observation",
        "metric": "step-time",
        "program": "rebuild",
        "side": "candidate",
        "system": "rebuilt",
        "stat": "p95",
        "unit": "ms",
        "bucket": "hour",
        "read": "rows",
    }
    for (side, stat), found in series.items():
        expected = chart_points(world, side, stat, since=start, until=end + timedelta(hours=1), bucket="hour")
        got = {float(t): float(v) for t, v in found["values"]}
        # Every step is an hour's start here; the last (`end`) has no rows yet, so no point.
        assert got == {t: expected[t] for t in got}
        assert len(got) == 48
    # …and the chart's selector is PostgreSQL's percentile_cont over the hour's rows, as numpy's.
    hour = world.now - timedelta(hours=5)
    rows = rows_of(world, "rebuilt", hour, hour + timedelta(hours=1))
    assert len(rows) == 4  # two workloads, every 30 minutes
    values = dict((float(t), float(v)) for t, v in series[("candidate", "p95")]["values"])
    assert values[hour.timestamp()] == pytest.approx(float(np.percentile(rows, 95)))


def test_a_range_over_three_days_gives_each_step_its_utc_day(live_server, world):
    prom = connect(live_server, world.viewer_token)
    start = (world.now - timedelta(days=4)).replace(hour=0)
    end = world.now
    result = prom.custom_query_range(SELECTOR.format(stats="mean|count"), start, end, step="6h")
    series = by_labels(result)
    midnight = (world.now - timedelta(days=2)).replace(hour=0)
    for (side, stat), found in series.items():
        assert found["metric"]["bucket"] == "day"
        day_of = {float(t): float(v) for t, v in found["values"]}
        expected = chart_points(world, side, stat, since=start, until=end, bucket="day")
        # Four steps a day, each the whole day's value.
        for offset in (0, 6, 12, 18):
            assert day_of[midnight.timestamp() + offset * 3600] == pytest.approx(
                expected[midnight.timestamp()]
            )
    rows = rows_of(world, "legacy", midnight, midnight + timedelta(days=1))
    assert len(rows) == 96
    counts = {float(t): float(v) for t, v in series[("baseline", "count")]["values"]}
    means = {float(t): float(v) for t, v in series[("baseline", "mean")]["values"]}
    assert counts[midnight.timestamp()] == 96
    assert means[midnight.timestamp()] == pytest.approx(float(rows.mean()))


def test_a_side_over_the_rollup_threshold_is_read_from_the_day_rollups(live_server, world, settings):
    settings.ROLLUP_THRESHOLD = 50
    rollups_rebuild()
    prom = connect(live_server, world.viewer_token)
    start, end = world.now - timedelta(days=DAYS_READ), world.now
    result = prom.custom_query_range(SELECTOR.format(stats="p50|count"), start, end, step="1d")
    series = by_labels(result)
    assert {s["metric"]["read"] for s in result} == {"rollups"}
    for (side, stat), found in series.items():
        expected = chart_points(world, side, stat, since=start, until=end, bucket="day", rollups=True)
        got = {float(t): float(v) for t, v in found["values"]}
        assert got and all(got[t] == pytest.approx(expected[t - t % 86400]) for t in got)
    # The rollups hold whole UTC days: from the start's midnight on, every row of the baseline.
    first_midnight = start.replace(hour=0)
    rows = Observation.objects.filter(
        definition=world.step_time, system=world.ref["legacy"], observed_at__gte=first_midnight
    )
    counted = {float(t): float(v) for t, v in series[("baseline", "count")]["values"]}
    assert sum(counted.values()) == rows.count()


def test_grafana_posts_the_query_form_encoded_and_gets_what_get_gets(live_server, world):
    start, end = world.now - timedelta(hours=12), world.now
    form = {
        "query": SELECTOR.format(stats="p50"),
        "start": str(start.timestamp()),
        "end": str(end.timestamp()),
        "step": "1800",
    }
    headers = {"Authorization": f"Bearer {world.viewer_token}"}
    posted = httpx.post(f"{live_server.url}/api/prom/api/v1/query_range", data=form, headers=headers)
    assert posted.status_code == 200, posted.text
    assert posted.json()["status"] == "success"
    fetched = connect(live_server, world.viewer_token, method="POST").custom_query_range(
        form["query"], start, end, step="30m"
    )
    assert posted.json()["data"]["result"] == fetched
    assert len(fetched) == 2 and all(len(s["values"]) == 24 for s in fetched)


def test_an_instant_query_gives_the_hour_holding_its_time(live_server, world):
    prom = connect(live_server, world.viewer_token)
    at = world.now - timedelta(hours=3) + timedelta(minutes=20)
    result = prom.custom_query(SELECTOR.format(stats="p50"), params={"time": at.timestamp()})
    hour = at.replace(minute=0)
    expected = chart_points(
        world, "baseline", "p50", since=hour, until=hour + timedelta(hours=1), bucket="hour"
    )
    (baseline,) = [s for s in result if s["metric"]["side"] == "baseline"]
    assert baseline["value"] == [
        pytest.approx(at.timestamp()),
        str(np.format_float_positional(expected[hour.timestamp()], trim="-")),
    ]


def test_save_and_test_in_grafana_sends_one_plus_one(live_server, world):
    prom = connect(live_server, world.viewer_token)
    assert prom.custom_query("1+1") == [pytest.approx(datetime.now(UTC).timestamp(), abs=60), "2"]


def test_labels_label_values_series_and_metadata_list_what_the_user_may_read(live_server, world):
    prom = connect(live_server, world.viewer_token)
    assert prom.get_label_names() == [
        "__name__",
        "metric",
        "program",
        "side",
        "stat",
        "system",
        "unit",
        "workload",
    ]
    assert prom.get_label_values("metric") == ["scaling-efficiency", "step-time", "training-throughput"]
    assert prom.get_label_names(params={"match[]": 'rebuild_tracker_observation{metric="no-such"}'}) == []
    # The private program is not the viewer's to read: it is not there at all.
    assert prom.get_label_values("program") == ["rebuild"]
    assert prom.get_label_values(
        "unit", params={"match[]": 'rebuild_tracker_observation{metric="step-time"}'}
    ) == ["ms"]
    assert prom.get_label_values("workload") == ["llm-finetune-8b", "llm-pretrain-70b", "vision-small"]
    end = world.now
    found = prom.get_series(end - timedelta(days=1), end, params={"match[]": SELECTOR.format(stats="p99")})
    assert sorted((s["side"], s["system"]) for s in found) == [
        ("baseline", "legacy"),
        ("candidate", "rebuilt"),
    ]
    assert prom.get_metric_metadata("rebuild_tracker_observation")[0]["type"] == "gauge"
    lead = connect(live_server, api_token(world.lead, "read"))
    assert lead.get_label_values("program") == ["rebuild", "secret"]


def test_a_private_program_reads_as_no_series_to_a_non_member(live_server, world):
    query = 'rebuild_tracker_observation{metric="step-time", program="secret", stat="mean"}'
    start, end = world.now - timedelta(days=1), world.now
    assert connect(live_server, world.viewer_token).custom_query_range(query, start, end, step="1h") == []
    assert (
        len(
            connect(live_server, api_token(world.lead, "read")).custom_query_range(
                query, start, end, step="1h"
            )
        )
        == 2
    )


def test_buildinfo_answers_as_prometheus_does(live_server, world):
    answer = httpx.get(
        f"{live_server.url}/api/prom/api/v1/status/buildinfo",
        headers={"Authorization": f"Bearer {world.viewer_token}"},
    )
    assert answer.status_code == 200
    assert answer.json()["status"] == "success"
    assert answer.json()["data"]["version"].startswith("2.")


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("rate(rebuild_tracker_observation[5m])", "function rate()"),
        ("sum(rebuild_tracker_observation)", "aggregation sum()"),
        ('rebuild_tracker_observation{metric="step-time"}[5m]', "a range selector [5m]"),
        ('rebuild_tracker_observation{metric!="step-time"}', "the matcher !="),
        ('rebuild_tracker_observation{metric=~"step.*"}', 'the regular expression metric=~"step.*"'),
        ('rebuild_tracker_observation{cluster="a"}', "label 'cluster' is not supported"),
        ("up", "serves rebuild_tracker_observation only"),
    ],
)
def test_a_query_outside_the_subset_is_bad_data_naming_what_is_unsupported(live_server, world, query, named):
    prom = connect(live_server, world.viewer_token)
    with pytest.raises(PrometheusApiClientException) as refused:
        prom.custom_query_range(query, world.now - timedelta(hours=1), world.now, step="1m")
    assert "HTTP Status Code 400" in str(refused.value)
    answer = httpx.get(
        f"{live_server.url}/api/prom/api/v1/query",
        params={"query": query},
        headers={"Authorization": f"Bearer {world.viewer_token}"},
    )
    assert answer.status_code == 400
    body = answer.json()
    assert body["status"] == "error" and body["errorType"] == "bad_data"
    assert named in body["error"]


def test_bad_parameters_are_bad_data_with_prometheus_messages(live_server, world):
    headers = {"Authorization": f"Bearer {world.viewer_token}"}
    url = f"{live_server.url}/api/prom/api/v1/query_range"
    query = SELECTOR.format(stats="p50")
    cases = [
        ({"query": query, "start": "yesterday", "end": "1", "step": "60"}, 'invalid parameter "start"'),
        (
            {"query": query, "start": "100", "end": "1", "step": "60"},
            "end timestamp must not be before start time",
        ),
        ({"query": query, "start": "1", "end": "100", "step": "0"}, "zero or negative query resolution step"),
        (
            {"query": query, "start": "0", "end": "86400", "step": "1"},
            "exceeded maximum resolution of 11,000",
        ),
        ({"start": "0", "end": "1", "step": "1"}, 'invalid parameter "query"'),
        # Past what datetime holds once a bucket is added: refused, not a 500.
        (
            {"query": query, "start": "1e15", "end": "1e15", "step": "60"},
            'invalid parameter "start": cannot parse "1e15" to a valid timestamp',
        ),
        (
            {"query": query, "start": "9999-12-31T23:00:00Z", "end": "9999-12-31T23:30:00Z", "step": "60"},
            'invalid parameter "start": cannot parse "9999-12-31T23:00:00Z" to a valid timestamp',
        ),
        # A long or out-of-range scalar: refused, not a RecursionError or an OverflowError.
        (
            {"query": "+".join(["1"] * 1200), "start": "0", "end": "60", "step": "60"},
            "a scalar expression of 2399 characters",
        ),
        ({"query": "1e310", "start": "0", "end": "60", "step": "60"}, "value out of range"),
    ]
    instant = f"{live_server.url}/api/prom/api/v1/query"
    cases += [
        ({"url": instant, "query": query, "time": "1e15"}, 'invalid parameter "time": cannot parse "1e15"'),
        ({"url": instant, "query": "1" * 310}, "a scalar expression of 310 characters"),
    ]
    for params, message in cases:
        answer = httpx.get(params.pop("url", url), params=params, headers=headers)
        assert answer.status_code == 400, params
        assert answer.json()["errorType"] == "bad_data"
        assert message in answer.json()["error"]


def test_authentication_and_scope_refusals_have_prometheus_error_shape(live_server, world):
    url = f"{live_server.url}/api/prom/api/v1/labels"
    anonymous = httpx.get(url)
    assert anonymous.status_code == 401
    assert anonymous.json()["status"] == "error" and anonymous.json()["errorType"] == "unauthorized"
    assert "WWW-Authenticate" in anonymous.headers
    wrong = httpx.get(url, headers={"Authorization": "Bearer not-a-token"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "Invalid token."
    ingest_only = api_token(world.viewer, "ingest")
    scoped = httpx.post(url, headers={"Authorization": f"Bearer {ingest_only}"})
    assert scoped.status_code == 403
    assert scoped.json()["errorType"] == "forbidden"
    assert "needs a token with the `read` scope" in scoped.json()["error"]
    with pytest.raises(PrometheusApiClientException, match="403"):
        connect(live_server, ingest_only).get_label_names()


def test_an_unknown_path_is_a_prometheus_shaped_404(live_server, world):
    answer = httpx.get(
        f"{live_server.url}/api/prom/api/v1/rules", headers={"Authorization": f"Bearer {world.viewer_token}"}
    )
    assert answer.status_code == 404
    assert answer.json()["errorType"] == "not_found"


def test_a_named_workload_is_that_workloads_series_alone(live_server, world):
    prom = connect(live_server, world.viewer_token)
    query = (
        'rebuild_tracker_observation{metric="step-time", program="rebuild", side="candidate", '
        'stat="count", workload="llm-pretrain-70b"}'
    )
    (found,) = prom.custom_query_range(query, world.now - timedelta(days=1), world.now, step="1h")
    assert found["metric"]["workload"] == "llm-pretrain-70b"
    # One row every 30 minutes on that workload: two an hour (the pooled series counts four).
    assert {v for _, v in found["values"]} == {"2"}
    assert len(found["values"]) == 24


def test_a_selector_touching_too_many_series_groups_is_bad_data(live_server, world, monkeypatch):
    from program.selectors import prometheus

    monkeypatch.setattr(prometheus, "MAX_READS", 2)
    prom = connect(live_server, world.viewer_token)
    with pytest.raises(PrometheusApiClientException, match="bad_data"):
        prom.custom_query_range(
            'rebuild_tracker_observation{stat="mean"}', world.now - timedelta(hours=2), world.now, step="1h"
        )
    assert prom.custom_query_range(
        'rebuild_tracker_observation{stat="mean", metric=~"step-time|training-throughput"}',
        world.now - timedelta(hours=2),
        world.now,
        step="1h",
    )
