"""integrations/grafana/rebuild-tracker.json, read as Grafana reads it: its variables resolved in order
through their label_values queries, then every panel target's expression with the variables substituted,
run by a real Prometheus HTTP API client (prometheus-api-client) against the live server. Every
combination of the variables' values gives data from the rows the test made, in the metric's unit."""

from __future__ import annotations

import itertools
import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from prometheus_api_client import PrometheusConnect

from tests.program.grafana_world import build_world

DASHBOARD = Path(__file__).resolve().parents[2] / "integrations" / "grafana" / "rebuild-tracker.json"
# label_values(label) or label_values(selector, label): Grafana asks /api/v1/label/<label>/values,
# with match[]=<selector> when there is one.
LABEL_VALUES = re.compile(r"label_values\(\s*(?:(?P<selector>.+),\s*)?(?P<label>\w+)\s*\)")
VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)|\[\[(\w+)\]\]")


@pytest.fixture
def world(transactional_db):
    return build_world()


@pytest.fixture(scope="module")
def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def substitute(text: str, values: dict[str, str]) -> str:
    """Grafana's interpolation of single-valued variables without "All": the value as it is (the
    Prometheus data source escapes only backslashes and quotes then, which keys never hold)."""

    def value(found: re.Match[str]) -> str:
        name = next(group for group in found.groups() if group)
        return values.get(name, found.group())

    return VARIABLE.sub(value, text)


def variable_query(variable: dict) -> str:
    query = variable["query"]
    return query["query"] if isinstance(query, dict) else query


def resolve(prom: PrometheusConnect, variable: dict, chosen: dict[str, str], start, end) -> list[str]:
    """The values of a variable, given the ones chosen before it."""
    found = LABEL_VALUES.fullmatch(substitute(variable_query(variable), chosen))
    assert found, variable_query(variable)
    params = {"start": start.timestamp(), "end": end.timestamp()}
    if found["selector"]:
        params["match[]"] = found["selector"]
    return prom.get_label_values(found["label"], params=params)


def test_the_dashboard_takes_its_data_source_as_an_input(dashboard):
    assert [i["name"] for i in dashboard["__inputs"]] == ["DS_TRACKER"]
    assert dashboard["__inputs"][0]["pluginId"] == "prometheus"
    sources = [p["datasource"] for p in dashboard["panels"]]
    sources += [t["datasource"] for p in dashboard["panels"] for t in p["targets"]]
    sources += [v["datasource"] for v in dashboard["templating"]["list"]]
    assert sources and all(s == {"type": "prometheus", "uid": "${DS_TRACKER}"} for s in sources)
    assert [v["name"] for v in dashboard["templating"]["list"]] == ["metric", "program", "unit"]


def test_every_variable_and_panel_query_returns_the_rows_made_in_their_unit(live_server, world, dashboard):
    prom = PrometheusConnect(
        url=f"{live_server.url}/api/prom", headers={"Authorization": f"Bearer {world.viewer_token}"}
    )
    assert dashboard["time"] == {"from": "now-7d", "to": "now"}
    end = world.now
    start = end - timedelta(days=7)
    metric_variable, program_variable, unit_variable = dashboard["templating"]["list"]
    metrics = resolve(prom, metric_variable, {}, start, end)
    assert metrics == ["scaling-efficiency", "step-time", "training-throughput"]
    ran = 0
    for metric in metrics:
        programs = resolve(prom, program_variable, {"metric": metric}, start, end)
        # The viewer may not read the private program: the variable never offers it.
        assert programs == ["rebuild"]
        (unit,) = resolve(prom, unit_variable, {"metric": metric}, start, end)
        assert (
            unit
            == world.ref[
                {"step-time": "step", "training-throughput": "throughput"}.get(metric, "scaling")
            ].unit
        )
        for program, panel in itertools.product(programs, dashboard["panels"]):
            chosen = {"metric": metric, "program": program, "unit": unit}
            assert "$" not in substitute(panel["title"], chosen)
            for target in panel["targets"]:
                expr = substitute(target["expr"], chosen)
                assert "$" not in expr
                result = prom.custom_query_range(expr, start, end, step=panel["interval"])
                assert {s["metric"]["side"] for s in result} == {"baseline", "candidate"}, expr
                assert all(s["metric"]["unit"] == unit and s["values"] for s in result)
                assert all(
                    s["metric"]["metric"] == metric and s["metric"]["program"] == program for s in result
                )
                ran += 1
    assert ran == len(metrics) * sum(len(p["targets"]) for p in dashboard["panels"])
