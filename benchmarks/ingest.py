"""Ingest throughput: the HTTP batch endpoint vs raw psycopg binary COPY, same rows, same run.

    DATABASE_URL=... .venv/bin/python benchmarks/ingest.py [--rows 1000000] [--batch 10000]

Starts gunicorn (2 workers), posts JSON batches of 10,000 rows over 4 client connections (so neither
worker waits for the client), then COPYs the same rows into a scratch table with raw psycopg. Prints
rows/s of each, the ratio (target ≥ 0.5), and on Linux the CPU seconds each side used, which shows
where the time goes. Without CELERY_BROKER_URL the follow-ups a batch queues through the outbox (gate
evaluations) run inside the request, as in `make run`; set it to measure with a broker, as in production.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import orjson
import psycopg
from _setup import BENCH_METRIC, ROOT, reference_data, remove_observations
from django.conf import settings
from django.db import connection


def make_rows(count: int) -> list[dict]:
    start = datetime.now(UTC) - timedelta(days=30)
    return [
        {
            "metric": BENCH_METRIC,
            "system": "bench-legacy" if i % 2 else "bench-rebuilt",
            "workload": "bench-workload",
            "value": 100.0 + (i * 7919) % 1000 / 10,
            "unit": "ms",
            "observed_at": (start + timedelta(milliseconds=i)).isoformat(),
            "run_id": f"bench-{i // 1000}",
        }
        for i in range(count)
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pids: Iterable[int]) -> dict[int, float]:
    """User + system CPU seconds each process has used so far, from /proc (Linux only)."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone, or not Linux
        used[pid] = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return used


def cpu_since(before: dict[int, float], after: dict[int, float]) -> float:
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def gunicorn_workers(server_pid: int) -> list[int]:
    try:
        return [
            int(pid) for pid in Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
        ]
    except OSError:
        return []


def postgres_backends(conn) -> list[int]:
    """The other client backends of this database: the gunicorn workers' connections."""
    rows = conn.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
    ).fetchall()
    return [pid for (pid,) in rows]


def connect() -> psycopg.Connection:
    dsn = settings.DATABASES["default"]
    return psycopg.connect(
        dbname=dsn["NAME"],
        user=dsn["USER"],
        host=dsn["HOST"] or dsn["OPTIONS"].get("host"),
        port=dsn["PORT"] or None,
        password=dsn["PASSWORD"] or None,
        autocommit=True,
    )


def run_api(rows: list[dict], batch: int, token: str) -> tuple[float, dict[str, float]]:
    port = free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.local", "DJANGO_DEBUG": "false"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--workers",
            "2",
            "--bind",
            f"127.0.0.1:{port}",
            "--timeout",
            "120",
            "--log-level",
            "warning",
            "--env",
            "DJANGO_SETTINGS_MODULE=config.settings.local",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        url = f"http://127.0.0.1:{port}/api/v1/observations/batch/"
        for _ in range(100):
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        bodies = [orjson.dumps({"observations": rows[i : i + batch]}) for i in range(0, len(rows), batch)]
        headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

        # One keep-alive client per thread: a new httpx.Client per request builds an SSL context each
        # time, which is the benchmark's own CPU, not the API's.
        clients = threading.local()

        def post(body: bytes) -> int:
            if not hasattr(clients, "client"):
                clients.client = httpx.Client(timeout=120)
            response = clients.client.post(url, content=body, headers=headers)
            if response.status_code != 201:
                raise SystemExit(f"API answered {response.status_code}: {response.text[:300]}")
            return response.json()["inserted"]

        # Backends opened during the run count from zero; those kept open since /healthz from where they were.
        with connect() as watcher:
            workers_before = cpu_seconds(gunicorn_workers(server.pid))
            backends_before = cpu_seconds(postgres_backends(watcher))
            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=4) as pool:
                inserted = sum(pool.map(post, bodies))
            elapsed = time.perf_counter() - started
            cpu = {
                "gunicorn workers": cpu_since(workers_before, cpu_seconds(gunicorn_workers(server.pid))),
                "PostgreSQL": cpu_since(backends_before, cpu_seconds(postgres_backends(watcher))),
            }
        assert inserted == len(rows), f"inserted {inserted} of {len(rows)}"
        return elapsed, cpu
    finally:
        server.terminate()
        server.wait()


def run_raw_copy(
    rows: list[dict], definition_id: int, system_ids: dict, workload_id: int
) -> tuple[float, dict[str, float]]:
    """The same rows, already typed, through psycopg's binary COPY into a scratch copy of the table
    (no index). Tags go as jsonb wire text, the cheapest way, as the ingest service sends them."""
    typed = [
        (
            definition_id,
            system_ids[r["system"]],
            workload_id,
            r["value"] / 1000.0,
            r["unit"],
            datetime.fromisoformat(r["observed_at"]),
            r["run_id"],
            "",
            "\x01{}",
        )
        for r in rows
    ]
    with connect() as conn:
        conn.execute("DROP TABLE IF EXISTS bench_scratch")
        conn.execute(
            "CREATE TABLE bench_scratch (LIKE metrics_observation INCLUDING DEFAULTS INCLUDING IDENTITY)"
        )
        backend_before = cpu_seconds([conn.info.backend_pid])
        client_before = time.process_time()
        started = time.perf_counter()
        with (
            conn.transaction(),
            conn.cursor() as cursor,
            cursor.copy(
                "COPY bench_scratch (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)"
                " FROM STDIN (FORMAT BINARY)"
            ) as copy,
        ):
            copy.set_types(["int8", "int8", "int8", "float8", "text", "timestamptz", "text", "text", "text"])
            for row in typed:
                copy.write_row(row)
        elapsed = time.perf_counter() - started
        cpu = {
            "client": time.process_time() - client_before,
            "PostgreSQL": cpu_since(backend_before, cpu_seconds([conn.info.backend_pid])),
        }
        conn.execute("DROP TABLE bench_scratch")
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    args = parser.parse_args()

    definition, legacy, rebuilt, workload, token = reference_data()
    remove_observations(definition=definition)
    connection.close()
    rows = make_rows(args.rows)

    api_seconds, api_cpu = run_api(rows, args.batch, token)
    raw_seconds, raw_cpu = run_raw_copy(
        rows, definition.pk, {"bench-legacy": legacy.pk, "bench-rebuilt": rebuilt.pk}, workload.pk
    )
    remove_observations(definition=definition)

    api_rate, raw_rate = args.rows / api_seconds, args.rows / raw_seconds
    cores = os.cpu_count()
    print(f"rows: {args.rows:,} in batches of {args.batch:,}; {cores} CPU cores")
    print(f"API (gunicorn, 2 workers, JSON): {api_rate:>12,.0f} rows/s  ({api_seconds:.2f} s)")
    print(f"raw psycopg binary COPY:         {raw_rate:>12,.0f} rows/s  ({raw_seconds:.2f} s)")
    print(f"ratio API / raw COPY: {api_rate / raw_rate:.2f}  (target ≥ 0.5)")
    if api_cpu["PostgreSQL"]:
        print(f"CPU seconds, API run: {describe(api_cpu)}; {cores * api_seconds:.2f} available")
        print(f"CPU seconds, raw COPY: {describe(raw_cpu)}")


def describe(cpu: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds:.2f}" for name, seconds in cpu.items())


if __name__ == "__main__":
    main()
