"""The same work on one PostgreSQL and on the local Citus cluster, side by side in one run (issue 31).

    .venv/bin/python benchmarks/citus.py [--rows 200000] [--metrics 16]

Starts the cluster (scripts/citus_cluster.py), makes a database of its own on each side
(`rebuild_tracker_bench_plain` on DATABASE_URL's server, `rebuild_tracker_bench_citus` on the cluster,
created afresh), and runs the same steps in a child process per side, one PostgreSQL first:

- ingest: the rows spread over the metrics, in batches of 10,000 through the ingest service;
- where the rows went (Citus): rows per worker, from each shard's own count;
- a one-metric comparison (exact rows, p95): the tasks of its plan and its CPU per call;
- the observations list across every metric (the API's first page of the last 7 days): its tasks and
  CPU per call.

CPU is this process plus every PostgreSQL process serving the side (on Citus the coordinator's and both
workers', which share these two cores), per row or per call; every figure has the load beside it. Two
cores cannot show a speed-up: this shows the plan shapes and what the distribution costs on one machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "scripts" / "citus_cluster.py"
BATCH = 10_000


def _postgres_processes(data_dirs: list[Path]) -> list[int]:
    """Every process of the PostgreSQL servers of these data directories (postmaster and children)."""
    roots = {int((d / "postmaster.pid").read_text().split()[0]) for d in data_dirs}
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            if parent in roots or int(entry.name) in roots:
                pids.append(int(entry.name))
    return pids


def child(mode: str, rows: int, metrics: int) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import _setup  # noqa: F401  - Django set up against DATABASE_URL
    from _measure import cpu_seconds, cpu_since, load
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.utils import timezone

    from core.citus import citus_mode
    from metrics.ingest import observations_ingest_rows
    from metrics.models import MetricDefinition, System, Workload
    from metrics.selectors import comparison_compute

    call_command("migrate", verbosity=0)
    citus = citus_mode()
    data_dirs = (
        [Path(os.environ["CITUS_DATA"]) / n for n in ("coordinator", "worker1", "worker2")]
        if citus
        else [Path(os.environ["PLAIN_DATA"])]
    )

    def database_cpu() -> dict[int, float]:
        return cpu_seconds(_postgres_processes(data_dirs))

    legacy = System.objects.create(key="bench-legacy", name="legacy")
    rebuilt = System.objects.create(key="bench-rebuilt", name="rebuilt")
    workload = Workload.objects.create(key="bench", name="bench", size="medium", criticality="peripheral")
    definitions = [
        MetricDefinition.objects.create(
            key=f"bench-{i}",
            version=1,
            name=f"bench {i}",
            unit="ms",
            direction="lower_is_better",
            statistic="p95",
            sampling="per_request",
            start_event="start",
            end_event="end",
            owner_team="bench",
            status="active",
        )
        for i in range(metrics)
    ]
    user = User.objects.create_superuser("bench", "bench@example.com", "bench")
    now = timezone.now()
    out: dict[str, object] = {"mode": mode}

    # Ingest: the same rows on both sides, metric by metric in batches.
    before_db, before = database_cpu(), time.process_time()
    started = time.perf_counter()
    per_metric = rows // metrics
    for d in definitions:
        for first in range(0, per_metric, BATCH):
            batch = [
                {
                    "metric": d.key,
                    "system": (legacy if i % 2 else rebuilt).key,
                    "workload": workload.key,
                    "unit": "ms",
                    "value": 10.0 + (i * 7919 % 1000) / 100,
                    "observed_at": (now - timedelta(seconds=i)).isoformat(),
                    "run_id": "bench",
                }
                for i in range(first, min(first + BATCH, per_metric))
            ]
            observations_ingest_rows(rows=batch, actor=user)
    wall = time.perf_counter() - started
    cpu = time.process_time() - before + cpu_since(before_db, database_cpu())
    out["ingest"] = {"cpu_us_per_row": cpu / rows * 1e6, "rows_per_s": rows / wall, "load": load()}

    if citus:
        with connection.cursor() as cursor:
            cursor.execute(
                """
                SELECT s.nodeport, sum(r.result::bigint) FROM run_command_on_shards(
                    'metrics_observation', $$SELECT count(*) FROM %s$$) r
                JOIN citus_shards s ON s.shardid = r.shardid GROUP BY 1 ORDER BY 1
                """
            )
            out["spread"] = {str(port): int(count) for port, count in cursor.fetchall()}

    def per_call(action, repeat: int = 20) -> float:
        action()
        before_db, before = database_cpu(), time.process_time()
        for _ in range(repeat):
            action()
        return (time.process_time() - before + cpu_since(before_db, database_cpu())) / repeat

    def compare() -> None:
        comparison_compute(definition=definitions[0], baseline=legacy, candidate=rebuilt, statistic="p95")

    client = Client()
    client.force_login(user)

    def listing() -> None:
        assert client.get("/api/v1/observations/").status_code == 200

    out["compare"] = {"cpu_ms": per_call(compare) * 1e3, "load": load()}
    out["list"] = {"cpu_ms": per_call(listing) * 1e3, "load": load()}
    if citus:
        from tests.explain import task_counts

        definition_id = definitions[0].pk
        out["compare"]["tasks"] = max(
            task_counts(f"SELECT value FROM metrics_observation WHERE definition_id = {definition_id}", None)
        )
        out["list"]["tasks"] = max(
            task_counts("SELECT * FROM metrics_observation ORDER BY observed_at DESC LIMIT 50", None)
        )
    print("RESULT " + json.dumps(out), flush=True)


def run_side(mode: str, url: str, args: argparse.Namespace, env: dict[str, str]) -> dict:
    side_env = {**env, "DATABASE_URL": url}
    if mode == "citus":
        side_env["DATABASE_ENGINE_MODE"] = "citus"
    result = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--rows", str(args.rows), "--metrics", str(args.metrics)],
        env=side_env,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        sys.exit(f"{mode} side failed:\n{result.stdout}\n{result.stderr}")
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--metrics", type=int, default=16)
    parser.add_argument("--child", choices=["plain", "citus"])
    args = parser.parse_args()
    if args.child:
        child(args.child, args.rows, args.metrics)
        return

    import psycopg

    env = dict(os.environ)
    env.setdefault("CITUS_DATA", "/tmp/rebuild-tracker-citus")
    env.setdefault("CITUS_SHARD_COUNT", "8")
    cluster = subprocess.run([sys.executable, str(CLUSTER)], capture_output=True, text=True, check=True)
    citus_admin = cluster.stdout.strip()
    plain_admin = env.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    with psycopg.connect(plain_admin, autocommit=True) as admin:
        env["PLAIN_DATA"] = admin.execute("SHOW data_directory").fetchone()[0]
        admin.execute("DROP DATABASE IF EXISTS rebuild_tracker_bench_plain WITH (FORCE)")
        admin.execute("CREATE DATABASE rebuild_tracker_bench_plain")
    plain_url = plain_admin.rsplit("/", 1)[0] + "/rebuild_tracker_bench_plain"
    citus_url = citus_admin.rsplit("/", 1)[0] + "/rebuild_tracker_bench_citus"
    _citus_database(citus_admin, "rebuild_tracker_bench_citus")

    sides = {
        mode: run_side(mode, url, args, env) for mode, url in (("plain", plain_url), ("citus", citus_url))
    }
    plain, citus = sides["plain"], sides["citus"]
    print(f"Citus: a coordinator and two workers on one 2-core machine, {env['CITUS_SHARD_COUNT']} shards; ")
    print(
        f"{args.rows:,} rows over {args.metrics} metrics; CPU of this process and every PostgreSQL process."
    )
    print("| work | one PostgreSQL | Citus | Citus ÷ one | load (one / Citus) |")
    print("|---|---|---|---|---|")
    for name, key, unit in (
        ("ingest, CPU per row", "ingest", "cpu_us_per_row"),
        ("one-metric comparison (p95, exact), CPU per call", "compare", "cpu_ms"),
        ("observations list across metrics, first page, CPU per call", "list", "cpu_ms"),
    ):
        a, b = plain[key][unit], citus[key][unit]
        suffix = " µs" if unit.startswith("cpu_us") else " ms"
        print(
            f"| {name} | {a:.1f}{suffix} | {b:.1f}{suffix} | {b / a:.2f} | {plain[key]['load']} / {citus[key]['load']} |"
        )
    print(
        f"ingest rows/s (wall): one PostgreSQL {plain['ingest']['rows_per_s']:,.0f}, Citus {citus['ingest']['rows_per_s']:,.0f}"
    )
    print(f"rows per worker (port: rows): {citus['spread']}")
    print(
        f"tasks: one-metric comparison {citus['compare']['tasks']}, list across metrics {citus['list']['tasks']}"
    )


def _citus_database(admin_url: str, name: str) -> None:
    """A fresh database with the extension on the coordinator and both workers, the workers added."""
    from urllib.parse import urlsplit, urlunsplit

    from core.citus.cluster import Node, cluster_workers, database_on_node, workers_join

    parts = urlsplit(admin_url)
    assert parts.hostname is not None and parts.port is not None

    def conninfo(node: Node, database: str) -> str:
        user = parts.netloc.rsplit("@", 1)[0]
        return urlunsplit(parts._replace(netloc=f"{user}@{node.host}:{node.port}", path=f"/{database}"))

    coordinator, workers = Node(parts.hostname, parts.port), cluster_workers(admin_url)
    for node in (coordinator, *workers):
        database_on_node(node, name, conninfo, recreate=True)
    workers_join(coordinator, workers, name, conninfo)


if __name__ == "__main__":
    main()
