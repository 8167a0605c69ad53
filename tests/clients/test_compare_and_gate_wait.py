"""`rebuild-tracker compare` and `rebuild-tracker gate wait` against the live server: the comparison's
verdict as a line (or the API's JSON), and a pipeline step that waits for a lead's decision."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from program import services
from program.models import Phase
from tests.clients.cli import cli_env, run_cli
from tests.conftest import api_token
from tests.program.factories import make_program, metrics_for_template, observe, spread


@pytest.fixture
def world(transactional_db, lead, viewer):
    ref = metrics_for_template()
    ref["program"] = make_program(lead)
    # Throughput (higher is better) 24 % up; step time (lower is better) 10 % up, so worse.
    observe(ref["throughput"], ref["legacy"], ref["medium"], spread(1000, 80))
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(1240, 80))
    observe(ref["step"], ref["legacy"], ref["medium"], spread(800, 80))
    observe(ref["step"], ref["rebuilt"], ref["medium"], spread(880, 80))
    poc = Phase.objects.get(program=ref["program"], kind="poc")
    ref["gate"] = services.gate_add(
        actor=lead, phase=poc, name="Fine-tune holds up", kind="milestone", due_date=poc.planned_end
    )
    services.criterion_add(
        actor=lead,
        gate=ref["gate"],
        name="Throughput at least 0.8× legacy",
        kind="relative",
        metric=ref["throughput"],
        workload=ref["medium"],
        operator="gte",
        threshold=0.8,
    )
    ref["token"] = api_token(viewer, "read")
    return ref


def compare(live_server, world, *args: str):
    return run_cli(
        "compare", "--baseline", "legacy", "--candidate", "rebuilt", *args,
        url=live_server.url, token=world["token"],
    )  # fmt: skip


def test_compare_prints_the_verdict_and_both_sides(live_server, world):
    done = compare(live_server, world, "--metric", "training-throughput", "--workload", "llm-finetune-8b")
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith("better: training-throughput@1 mean in token/s, legacy ")
    assert "(n=80) → rebuilt " in line and "+24.0 %" in line


def test_compare_json_is_the_apis_answer(live_server, world, as_user, viewer):
    done = compare(live_server, world, "--metric", "step-time", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    direct = as_user(viewer).get(
        "/api/v1/comparisons/", {"metric": "step-time", "baseline": "legacy", "candidate": "rebuilt"}
    )
    assert answer == direct.json()
    assert answer["verdict"] == "worse"


def test_fail_on_worse_exits_1_only_when_worse(live_server, world):
    assert compare(live_server, world, "--metric", "step-time", "--fail-on-worse").returncode == 1
    assert compare(live_server, world, "--metric", "training-throughput", "--fail-on-worse").returncode == 0


def test_compare_passes_tags_and_statistic(live_server, world):
    # No row carries the tag, so both sides are empty: the filter reached the API.
    done = compare(live_server, world, "--metric", "step-time", "--tag", "cluster=a", "--statistic", "p90")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("insufficient_data: step-time@1 p90 in ms")


def test_compare_with_an_unknown_metric_is_exit_2_naming_it(live_server, world):
    done = compare(live_server, world, "--metric", "no-such-metric")
    assert done.returncode == 2
    assert "metric" in done.stderr and "no-such-metric" in done.stderr


def wait(live_server, world, *args: str, timeout: float = 60):
    return run_cli(
        "gate",
        "wait",
        str(world["gate"].pk),
        *args,
        url=live_server.url,
        token=world["token"],
        timeout=timeout,
    )


def test_wait_returns_0_once_a_lead_passes_the_gate(live_server, world, lead):
    waiting = subprocess.Popen(
        [sys.executable, "-m", "rebuild_tracker_cli", "gate", "wait", str(world["gate"].pk),
         "--until", "passed", "--timeout", "60", "--interval", "0.2"],
        env=cli_env(live_server.url, world["token"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    time.sleep(1.5)
    assert waiting.poll() is None  # still open: still waiting
    services.gate_decide(gate=world["gate"], actor=lead, decision="pass", note="holds")
    out, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 0, err
    assert out.strip() == f"reached: gate {world['gate'].pk} (Fine-tune holds up) is passed"


def test_wait_returns_1_when_the_gate_is_decided_otherwise(live_server, world, lead):
    services.gate_decide(gate=world["gate"], actor=lead, decision="fail", note="not yet")
    done = wait(live_server, world, "--until", "passed", "--timeout", "30")
    assert done.returncode == 1
    assert done.stdout.strip().endswith("is failed, not passed")


def test_wait_accepts_several_statuses(live_server, world, lead):
    services.gate_decide(gate=world["gate"], actor=lead, decision="waive", note="proven elsewhere")
    assert wait(live_server, world, "--until", "passed,waived", "--timeout", "30").returncode == 0


def test_wait_returns_1_when_the_timeout_passes(live_server, world):
    started = time.monotonic()
    done = wait(live_server, world, "--until", "passed", "--timeout", "1", "--interval", "0.3")
    assert done.returncode == 1
    # Evaluated when its criterion was added (tasks run eagerly here): ready for a lead, not decided.
    gate = world["gate"].pk
    assert (
        done.stdout.strip()
        == f"timeout: gate {gate} (Fine-tune holds up) is still ready after 1 s, not passed"
    )
    assert time.monotonic() - started < 20


def test_wait_on_an_unknown_gate_is_exit_2(live_server, world):
    done = run_cli("gate", "wait", "999999", "--timeout", "5", url=live_server.url, token=world["token"])
    assert done.returncode == 2 and "HTTP 404" in done.stderr


def test_wait_refuses_an_unknown_status_as_usage(live_server, world):
    done = wait(live_server, world, "--until", "green", "--timeout", "5")
    assert done.returncode == 2 and "--until" in done.stderr
