"""Ingest throughput: the HTTP batch endpoint vs raw psycopg binary COPY, same rows, same run.

    DATABASE_URL=... .venv/bin/python benchmarks/ingest.py [--rows 1000000] [--batch 10000] [--prefill N]

Starts gunicorn (2 workers), posts JSON batches of 10,000 rows over 4 client connections (so neither
worker waits for the client), then COPYs the same rows with raw psycopg, in the same session settings:

- into metrics_observation itself, emptied of the API's rows first: the same primary key, indexes and
  partitions, the physical limit for this work — `ratio ingest-indexed` (target ≥ 0.8);
- into a scratch copy of the table without any index or partition, for reference —
  `ratio ingest-unindexed`.

With `--prefill N`, the benchmark metric is then filled with N rows over the year before (server-side,
with its months' partitions, as a year of history would be) and the API and the indexed COPY run
again: `ratio ingest-prefilled` is the API's rate into the prefilled table ÷ its rate into the empty
one (target ≥ 0.8). Rows measured are new runs of the last hour, as live ingest sends. On Linux it
also prints the CPU seconds each side used, which shows where the time goes. Set CELERY_BROKER_URL
to a broker no worker consumes (`make bench` does): the follow-ups a batch queues (rollup refreshes,
gate evaluations) are then queued, as in production, where a worker runs them apart from the request.
Without a broker they run inside each request (eager), and a day's rollup is recomputed after every
batch of that day, which measures the worker's job, not the API's.
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


def make_rows(count: int, start: datetime) -> list[dict]:
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


def copy_rows(conn, table: str, typed: Iterable[tuple]) -> None:
    """Typed observation rows into `table` (laid out as metrics_observation) by binary COPY, in one transaction."""
    with (
        conn.transaction(),
        conn.cursor() as cursor,
        cursor.copy(
            f"COPY {table} (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)"
            " FROM STDIN (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(["int8", "int8", "int8", "float8", "text", "timestamptz", "text", "text", "text"])
        for row in typed:
            copy.write_row(row)


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
    rows: list[dict], definition_id: int, system_ids: dict, workload_id: int, *, indexed: bool
) -> tuple[float, dict[str, float]]:
    """The same rows, already typed, through psycopg's binary COPY: into metrics_observation itself
    (`indexed`), or into a scratch copy of its columns without index or partition. Tags go as jsonb
    wire text, the cheapest way, as the ingest service sends them."""
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
    table = "metrics_observation" if indexed else "bench_scratch"
    with connect() as conn:
        if not indexed:
            conn.execute("DROP TABLE IF EXISTS bench_scratch")
            conn.execute("CREATE TABLE bench_scratch (LIKE metrics_observation INCLUDING DEFAULTS)")
        backend_before = cpu_seconds([conn.info.backend_pid])
        client_before = time.process_time()
        started = time.perf_counter()
        copy_rows(conn, table, typed)
        elapsed = time.perf_counter() - started
        cpu = {
            "client": time.process_time() - client_before,
            "PostgreSQL": cpu_since(backend_before, cpu_seconds([conn.info.backend_pid])),
        }
        if not indexed:
            conn.execute("DROP TABLE bench_scratch")
    return elapsed, cpu


SESSION_SETTINGS = ("work_mem", "maintenance_work_mem", "synchronous_commit", "wal_compression", "jit")


def session_settings(conn) -> dict[str, str]:
    return {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in SESSION_SETTINGS}


def app_session_settings() -> dict[str, str]:
    with connection.cursor() as cursor:
        found = {}
        for name in SESSION_SETTINGS:
            cursor.execute(f"SHOW {name}")
            found[name] = cursor.fetchone()[0]
    connection.close()
    return found


def measured_rows_remove(definition_id: int, since: datetime) -> None:
    """Delete the rows a run wrote (all observed after `since`) and rebuild the partitions holding
    them, so the next run finds the table as the previous one did; the prefill is left alone."""
    with connect() as conn:
        touched = [
            name
            for (name,) in conn.execute(
                "SELECT DISTINCT tableoid::regclass::text FROM metrics_observation"
                " WHERE definition_id = %s AND observed_at >= %s",
                [definition_id, since],
            ).fetchall()
        ]
        conn.execute(
            "DELETE FROM metrics_observation WHERE definition_id = %s AND observed_at >= %s",
            [definition_id, since],
        )
        for name in touched:
            conn.execute(f"REINDEX TABLE {name}")
            conn.execute(f"VACUUM ANALYZE {name}")


PREFILL_SQL = """
INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)
SELECT %(definition)s, CASE WHEN i %% 2 = 0 THEN %(legacy)s ELSE %(rebuilt)s END, %(workload)s,
       100 + random() * 50, 'ms', %(before)s - interval '365 days' * (1 - i::float8 / %(count)s),
       'prefill-' || (i / 1000), '', '{}'::jsonb
FROM generate_series(0, %(count)s - 1) AS i
"""


def prefill(
    count: int, *, before: datetime, definition_id: int, legacy: int, rebuilt: int, workload: int
) -> float:
    """`count` rows spread over the year before `before`, written server-side; seconds taken."""
    from metrics.partitions import observations_partitions_create

    started = time.perf_counter()
    observations_partitions_create(since=before - timedelta(days=365))
    connection.close()
    with connect() as conn:
        conn.execute(
            PREFILL_SQL,
            {
                "definition": definition_id,
                "legacy": legacy,
                "rebuilt": rebuilt,
                "workload": workload,
                "count": count,
                "before": before,
            },
        )
        conn.execute("VACUUM ANALYZE metrics_observation")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument(
        "--prefill", type=int, default=0, help="also measure into a table holding this many rows"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each side, alternating; the median run counts"
    )
    args = parser.parse_args()
    if not settings.CELERY_BROKER_URL:
        raise SystemExit(
            "Set CELERY_BROKER_URL to a Redis database no worker consumes (make bench does): without a broker"
            " each request would also run the rollup refresh a worker runs in production."
        )

    definition, legacy, rebuilt, workload, token = reference_data()
    remove_observations(definition=definition)
    app_settings = app_session_settings()
    with connect() as conn:
        raw_settings = session_settings(conn)
    if raw_settings != app_settings:
        raise SystemExit(f"session settings differ: app {app_settings}, raw COPY {raw_settings}")
    start = datetime.now(UTC) - timedelta(hours=1)
    rows = make_rows(args.rows, start)
    system_ids = {"bench-legacy": legacy.pk, "bench-rebuilt": rebuilt.pk}

    def measure() -> dict[str, tuple[float, dict[str, float]]]:
        """The median of `--repeat` alternating runs of each side: the machine's other work comes and
        goes, and alternating spreads it over both."""
        runs: dict[str, list] = {"API": [], "indexed": []}
        for _ in range(args.repeat):
            runs["API"].append(run_api(rows, args.batch, token))
            measured_rows_remove(definition.pk, start)
            runs["indexed"].append(run_raw_copy(rows, definition.pk, system_ids, workload.pk, indexed=True))
            measured_rows_remove(definition.pk, start)
        return {
            name: sorted(results, key=lambda run: run[0])[len(results) // 2] for name, results in runs.items()
        }

    empty = measure()
    unindexed = run_raw_copy(rows, definition.pk, system_ids, workload.pk, indexed=False)
    cores = os.cpu_count()
    rate = {name: args.rows / seconds for name, (seconds, _) in empty.items()}
    rate["unindexed"] = args.rows / unindexed[0]
    print(
        f"rows: {args.rows:,} in batches of {args.batch:,}; {cores} CPU cores; median of {args.repeat} run(s); session settings {app_settings}"
    )
    print(
        f"API (gunicorn, 2 workers, JSON):            {rate['API']:>12,.0f} rows/s  ({empty['API'][0]:.2f} s)"
    )
    print(
        f"raw binary COPY, same table (key, indexes): {rate['indexed']:>12,.0f} rows/s  ({empty['indexed'][0]:.2f} s)"
    )
    print(
        f"raw binary COPY, unindexed scratch table:   {rate['unindexed']:>12,.0f} rows/s  ({unindexed[0]:.2f} s)"
    )
    print(f"CPU seconds, API run: {describe(empty['API'][1])}; {cores * empty['API'][0]:.2f} available")
    print(f"CPU seconds, raw COPY same table: {describe(empty['indexed'][1])}")
    print(f"CPU seconds, raw COPY unindexed: {describe(unindexed[1])}")

    if args.prefill:
        took = prefill(
            args.prefill,
            before=start - timedelta(seconds=1),
            definition_id=definition.pk,
            legacy=legacy.pk,
            rebuilt=rebuilt.pk,
            workload=workload.pk,
        )
        print(f"prefilled {args.prefill:,} rows over the year before in {took:.0f} s")
        filled = measure()
        filled_rate = {name: args.rows / seconds for name, (seconds, _) in filled.items()}
        print(
            f"API into {args.prefill:,} rows:             {filled_rate['API']:>12,.0f} rows/s  ({filled['API'][0]:.2f} s)"
        )
        print(
            f"raw COPY into {args.prefill:,} rows:        {filled_rate['indexed']:>12,.0f} rows/s  ({filled['indexed'][0]:.2f} s)"
        )
        print(f"CPU seconds, API run into {args.prefill:,}: {describe(filled['API'][1])}")
        print(f"CPU seconds, raw COPY into {args.prefill:,}: {describe(filled['indexed'][1])}")
        print(f"ratio raw-copy-prefilled: {filled_rate['indexed'] / rate['indexed']:.2f}")
        print(f"ratio ingest-indexed-prefilled: {filled_rate['API'] / filled_rate['indexed']:.2f}")
    remove_observations(definition=definition)

    print(f"ratio ingest-unindexed: {rate['API'] / rate['unindexed']:.2f}  (reference)")
    print(f"ratio ingest-indexed: {rate['API'] / rate['indexed']:.2f}  (target ≥ 0.8)")
    if args.prefill:
        print(f"ratio ingest-prefilled: {filled_rate['API'] / rate['API']:.2f}  (target ≥ 0.8)")


def describe(cpu: dict[str, float]) -> str:
    return ", ".join(f"{name} {seconds:.2f}" for name, seconds in cpu.items())


if __name__ == "__main__":
    main()
