"""The query API read by Prometheus' own Go API client (client_golang's api/prometheus/v1, which POSTs the
query form-encoded as Grafana does): `promtool query range` from Debian's `prometheus` package, with the
bearer token as a header, against the live server. Its strict decoding of the matrix is the check; the
values are the comparison chart's selector's."""

from __future__ import annotations

import json
import subprocess
from datetime import timedelta

import pytest

from tests.conftest import api_token
from tests.program.grafana_world import build_world
from tests.program.test_prometheus_api import chart_points
from tests.system_packages import require_program


@pytest.fixture
def world(transactional_db):
    return build_world()


def promtool_range(live_server, token: str, expr: str, start, end, step: str) -> subprocess.CompletedProcess:
    promtool = require_program("promtool", package="prometheus", path="/usr/bin/promtool")
    return subprocess.run(
        [
            promtool,
            "query",
            "range",
            "--format=json",
            f"--header=Authorization: Bearer {token}",
            f"--start={start.timestamp():.3f}",
            f"--end={end.timestamp():.3f}",
            f"--step={step}",
            f"{live_server.url}/api/prom",
            expr,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_prometheus_own_client_reads_the_range_as_the_comparison_chart_has_it(live_server, world):
    start, end = world.now - timedelta(days=1), world.now
    expr = 'rebuild_tracker_observation{metric="step-time", program="rebuild", stat="p95"}'
    done = promtool_range(live_server, world.viewer_token, expr, start, end, "1h")
    assert done.returncode == 0, done.stderr
    matrix = json.loads(done.stdout)
    assert sorted(s["metric"]["side"] for s in matrix) == ["baseline", "candidate"]
    for found in matrix:
        assert found["metric"]["unit"] == "ms"
        expected = chart_points(
            world, found["metric"]["side"], "p95", since=start, until=end + timedelta(hours=1), bucket="hour"
        )
        got = {float(t): float(v) for t, v in found["values"]}
        assert len(got) == 24
        assert got == {t: expected[t] for t in got}


def test_prometheus_own_client_reports_bad_data_with_what_is_unsupported(live_server, world):
    done = promtool_range(
        live_server,
        world.viewer_token,
        "rate(rebuild_tracker_observation[5m])",
        world.now - timedelta(hours=1),
        world.now,
        "1m",
    )
    assert done.returncode != 0
    assert "bad_data" in done.stderr and "function rate() is not supported" in done.stderr


def test_prometheus_own_client_is_refused_without_the_read_scope(live_server, world):
    done = promtool_range(
        live_server,
        api_token(world.viewer, "ingest"),
        'rebuild_tracker_observation{metric="step-time"}',
        world.now - timedelta(hours=1),
        world.now,
        "1m",
    )
    assert done.returncode != 0
    assert "403" in done.stderr and "needs a token with the `read` scope" in done.stderr
