"""Freeze check CPU under gunicorn against a bare DRF view with the same token authentication.

    DATABASE_URL=postgres://…/rt_bench CACHE_URL=redis://127.0.0.1:6379/9 \
        .venv/bin/python benchmarks/http_reads.py [--observations 1000000] [--seconds 5] [--rounds 4]

Loads the demo data, tops the observations up to --observations (binary COPY) and adds freeze data
at a realistic size (150 components, a dozen windows — one recurring nightly — with levels, past
overrides, exceptions in every state). Starts gunicorn (2 sync workers) with benchmarks/reads_settings.py,
whose URLconf adds /bench/bare-drf/ (a DRF view with the app's authentication and permission defaults;
the app does not ship it). Then drives each endpoint with `wrk` (Debian package `wrk`) over several
connections for --seconds, alternating bare DRF / freeze check (every component in turn) for --rounds
rounds, and prints for each the CPU per request — the gunicorn workers' and their PostgreSQL
backends' (application_name `bench-reads`), benchmarks/_measure.py — beside req/s and p50/p95, and
`ratio freeze-check-cpu` = the bare view's CPU per request ÷ the freeze check's (target ≥ 0.5).
Also prints the SQL queries one request of each runs (in-process, same settings).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from _measure import backends, connect, cpu_seconds, cpu_since, load, target
from _setup import ROOT, gunicorn_serving, reference_data
from django.db import transaction
from ingest import gunicorn_workers

BENCH_DIR = Path(__file__).resolve().parent
APPLICATION = "bench-reads"  # PGAPPNAME of the gunicorn workers: their backends, told apart
BARE_PATH = "/bench/bare-drf/"
WRK_SCRIPT = """
local paths = {%(paths)s}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i %% #paths) + 1], {["Authorization"] = "Token %(token)s"})
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests": %%d, "duration_us": %%d, "p50_us": %%d, "p95_us": %%d, "errors": %%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    e.status + e.connect + e.read + e.write + e.timeout))
end
"""


# --- data ------------------------------------------------------------------------------------------


def ensure_demo() -> None:
    from metrics.models import Observation

    if not Observation.objects.filter(source="demo").exists():
        subprocess.run(
            [sys.executable, "manage.py", "load_demo"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL
        )


def ensure_observations(target: int) -> int:
    """Tops metrics_observation up to `target` rows with benchmark rows (binary COPY)."""
    from django.db import connection

    from metrics.partitions import observations_partitions_create

    definition, legacy, rebuilt, workload, _ = reference_data()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM metrics_observation")
        have = cursor.fetchone()[0]
    missing = target - have
    if missing <= 0:
        return have
    start = datetime.now(UTC) - timedelta(days=90)
    observations_partitions_create(since=start)  # as an operator backfilling history would
    connection.ensure_connection()
    raw = connection.connection  # autocommit: the COPY commits by itself
    with (
        raw.cursor() as cursor,
        cursor.copy(
            "COPY metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id,"
            " source, tags) FROM STDIN (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(["int8", "int8", "int8", "float8", "text", "timestamptz", "text", "text", "jsonb"])
        offset = have
        for i in range(offset, offset + missing):
            copy.write_row(
                (
                    definition.pk,
                    (legacy if i % 2 else rebuilt).pk,
                    workload.pk,
                    0.1 + (i * 7919) % 1000 / 10_000,
                    "ms",
                    start + timedelta(milliseconds=7 * i),
                    f"bench-{i // 1000}",
                    "bench",
                    "{}",
                )
            )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE metrics_observation")
        cursor.execute("SELECT count(*) FROM metrics_observation")
        return cursor.fetchone()[0]


def ensure_freeze_data() -> dict[str, int]:
    """150 components, 12 more windows (past, in force — one recurring nightly — and future) with levels,
    40 past overrides and 300 exceptions in every state (ORM rows, made once)."""
    from freeze.models import Component, FreezeEntry, FreezeException, FreezeOverride, FreezeWindow
    from program.models import Program

    program = Program.objects.get(slug="frontier-rebuild")
    rng = random.Random(14)
    if not Component.objects.filter(key__startswith="bench-c-").exists():
        _add_freeze_data(program, rng)
    return {
        "components": Component.objects.count(),
        "windows": FreezeWindow.objects.count(),
        "entries": FreezeEntry.objects.count(),
        "overrides": FreezeOverride.objects.count(),
        "exceptions": FreezeException.objects.count(),
    }


@transaction.atomic
def _add_freeze_data(program, rng) -> None:
    from django.contrib.auth.models import User

    from freeze.models import Component, FreezeEntry, FreezeException, FreezeOverride, FreezeWindow, Level

    layers = [choice for choice, _ in Component.Layer.choices]
    Component.objects.bulk_create(
        Component(key=f"bench-c-{n:03}", name=f"Bench component {n}", layer=layers[n % len(layers)],
                  owner_team="framework-engineers")
        for n in range(140)
    )  # fmt: skip
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    spans = [(-60, -40), (-35, -20), (-18, -10), (-9, -7), (-3, 10), (-1, 4), (-20, 30), (5, 12), (15, 25),
             (30, 45), (50, 60)]  # fmt: skip
    windows = [
        FreezeWindow.objects.create(program=program, name=f"Bench window {n}", starts_at=now + timedelta(days=a),
                                    ends_at=now + timedelta(days=b), default_level=rng.choice(list(Level)))
        for n, (a, b) in enumerate(spans)
    ]  # fmt: skip
    windows.append(
        FreezeWindow.objects.create(
            program=program, name="Bench nightly freeze", starts_at=now - timedelta(days=30),
            ends_at=now + timedelta(days=60), default_level=Level.OPEN, rrule="FREQ=DAILY",
            timezone="Europe/Berlin", occurrence_duration=timedelta(hours=8),
        )
    )  # fmt: skip
    components = list(Component.objects.all())
    FreezeEntry.objects.bulk_create(
        FreezeEntry(window=window, component=component, level=rng.choice(list(Level)))
        for window in windows
        for component in rng.sample(components, len(components) // 2)
    )
    users = list(User.objects.all()[:4])
    FreezeOverride.objects.bulk_create(
        FreezeOverride(component=rng.choice(components), opened_by=users[0], reason="bench",
                       starts_at=now - timedelta(days=d), ends_at=now - timedelta(days=d) + timedelta(hours=6),
                       review_note="done", reviewed_by=users[1], reviewed_at=now - timedelta(days=d - 1))
        for d in range(2, 42)
    )  # fmt: skip
    statuses = [choice for choice, _ in FreezeException.Status.choices]
    FreezeException.objects.bulk_create(
        FreezeException(component=rng.choice(components), window=rng.choice(windows), requester=users[2],
                        last_editor=users[2], title=f"bench change {n}", change="x", justification="y",
                        risk="low", rollback_plan="z", status=rng.choice(statuses),
                        change_starts_at=start, change_ends_at=start + timedelta(hours=rng.randint(2, 72)))
        for n, start in enumerate(now + timedelta(hours=rng.randint(-24 * 40, 24 * 20)) for _ in range(300))
    )  # fmt: skip


def check_components() -> list[str]:
    """Every component: the check's cost over all of them, not the few hot ones."""
    from freeze.models import Component

    return sorted(Component.objects.values_list("key", flat=True))


def viewer_token() -> str:
    from django.contrib.auth.models import User

    from core.services.api_tokens import api_token_create

    user, _ = User.objects.get_or_create(username="bench-reader")
    return api_token_create(actor=user, name="benchmark reads", scopes=["read"]).secret


def queries_per_request(paths: dict[str, str], token: str) -> dict[str, int]:
    """SQL queries one warm request runs (second of two), with the benchmark's settings, in-process."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, override_settings

    counts = {}
    with override_settings(ROOT_URLCONF="reads_urls", ALLOWED_HOSTS=["*"]):
        client = Client(HTTP_AUTHORIZATION=f"Token {token}")
        for name, path in paths.items():
            assert client.get(path).status_code == 200, (name, path)
            with CaptureQueriesContext(connection) as captured:
                client.get(path)
            counts[name] = len(captured.captured_queries)
    return counts


# --- load --------------------------------------------------------------------------------------------


def run_wrk(base: str, paths: list[str], token: str, seconds: float, connections: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT % {"paths": ", ".join(json.dumps(p) for p in paths), "token": token})
    try:
        out = subprocess.run(
            ["wrk", "-t1", f"-c{connections}", f"-d{round(seconds)}s", "--timeout", "10s", "-s", script.name, base],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
    finally:
        os.unlink(script.name)
    return json.loads(out.strip().splitlines()[-1])


def settle(base: str) -> None:
    """Wait until requests queued by the last slice are done (a slow endpoint's backlog would
    otherwise land in the next endpoint's slice): five health checks in a row answer quickly."""
    deadline = time.monotonic() + 20
    quick = 0
    while quick < 5 and time.monotonic() < deadline:
        started = time.perf_counter()
        httpx.get(f"{base}/healthz", timeout=30)
        # 0.2 s: on a shared, loaded machine a health check alone takes longer than 50 ms.
        quick = quick + 1 if time.perf_counter() - started < 0.2 else 0
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--observations", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=int, default=5, help="length of one slice of load")
    parser.add_argument("--rounds", type=int, default=4, help="slices per endpoint, alternated")
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk not found: apt-get install wrk")

    ensure_demo()
    observations = ensure_observations(args.observations)
    sizes = ensure_freeze_data()
    token = viewer_token()
    components = check_components()
    check_paths = [f"/api/v1/freeze/check/?component={key}" for key in components]
    endpoints = {"bare-drf": [BARE_PATH], "freeze-check": check_paths}
    queries = queries_per_request({"bare-drf": BARE_PATH, "freeze-check": check_paths[0]}, token)
    from django.db import connection

    connection.close()

    with gunicorn_serving(
        "reads_settings", workers=2, env={"PYTHONPATH": str(BENCH_DIR), "PGAPPNAME": APPLICATION}
    ) as (base, server):
        for name, paths in endpoints.items():  # answers are right, and each worker has warmed up
            for path in paths:
                response = httpx.get(base + path, headers={"Authorization": f"Token {token}"}, timeout=30)
                assert response.status_code == 200, (name, path, response.status_code, response.text[:300])
            run_wrk(base, paths, token, 1, args.connections)
            settle(base)
        totals = {
            name: {"requests": 0, "seconds": 0.0, "p50": [], "p95": [], "errors": 0, "cpu": 0.0, "pg": 0.0}
            for name in endpoints
        }
        workers = gunicorn_workers(server.pid)
        watcher = connect()
        for _ in range(args.rounds):
            for name, paths in endpoints.items():
                before = cpu_seconds([*workers, *backends(watcher, APPLICATION)])
                result = run_wrk(base, paths, token, args.seconds, args.connections)
                settle(base)
                after = cpu_seconds([*workers, *backends(watcher, APPLICATION)])
                totals[name]["cpu"] += cpu_since(before, after)
                totals[name]["pg"] += cpu_since(before, {p: s for p, s in after.items() if p not in workers})
                total = totals[name]
                total["requests"] += result["requests"]
                total["seconds"] += result["duration_us"] / 1e6
                total["p50"].append(result["p50_us"] / 1000)
                total["p95"].append(result["p95_us"] / 1000)
                total["errors"] += result["errors"]

    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPU cores; gunicorn 2 sync workers; "
          f"wrk {args.connections} connections; {args.rounds} × {args.seconds:g} s per endpoint, alternated")  # fmt: skip
    print(f"data: {observations:,} observations; freeze: " + ", ".join(f"{v} {k}" for k, v in sizes.items()))
    print(f"freeze check components: {len(components)}, every one in turn")
    rates = {}
    for name, total in totals.items():
        rates[name] = total["requests"] / total["seconds"]
        p50 = sorted(total["p50"])[len(total["p50"]) // 2]
        p95 = max(total["p95"])
        print(f"{name:>13}: {rates[name]:8.0f} req/s  p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  "
              f"errors {total['errors']}  SQL queries/request {queries[name]}  "
              f"CPU {total['cpu'] / total['requests'] * 1000:.2f} ms/request (workers + PostgreSQL "
              f"{total['pg'] / total['requests'] * 1000:.2f})  {load()}")  # fmt: skip
    cpu = {name: total["cpu"] / total["requests"] for name, total in totals.items()}
    target(
        "freeze-check-cpu", cpu["bare-drf"] / cpu["freeze-check"], "≥ 0.5",
        note=f"over {len(components)} components",
    )  # fmt: skip


if __name__ == "__main__":
    main()
