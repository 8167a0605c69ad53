"""Ingest throughput: the HTTP batch endpoint vs raw psycopg binary COPY, same rows, same run.

    DATABASE_URL=... .venv/bin/python benchmarks/ingest.py [--rows 1000000] [--batch 10000]

Starts gunicorn (2 workers), posts JSON batches of 10,000 rows from 2 client threads, then COPYs the
same rows into a scratch table with raw psycopg. Prints rows/s of each and the ratio (target ≥ 0.5).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import httpx
import orjson
import psycopg
from _setup import BENCH_METRIC, ROOT, reference_data
from django.conf import settings
from django.db import connection

from metrics.models import Observation


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


def run_api(rows: list[dict], batch: int, token: str) -> float:
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

        def post(body: bytes) -> int:
            with httpx.Client(timeout=120) as client:
                response = client.post(url, content=body, headers=headers)
            if response.status_code != 201:
                raise SystemExit(f"API answered {response.status_code}: {response.text[:300]}")
            return response.json()["inserted"]

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=2) as pool:
            inserted = sum(pool.map(post, bodies))
        elapsed = time.perf_counter() - started
        assert inserted == len(rows), f"inserted {inserted} of {len(rows)}"
        return elapsed
    finally:
        server.terminate()
        server.wait()


def run_raw_copy(rows: list[dict], definition_id: int, system_ids: dict, workload_id: int) -> float:
    """The same rows, already typed, through psycopg's binary COPY into a scratch copy of the table."""
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
            "{}",
        )
        for r in rows
    ]
    dsn = settings.DATABASES["default"]
    with psycopg.connect(
        dbname=dsn["NAME"],
        user=dsn["USER"],
        host=dsn["HOST"] or dsn["OPTIONS"].get("host"),
        port=dsn["PORT"] or None,
        password=dsn["PASSWORD"] or None,
    ) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_scratch")
        conn.execute(
            "CREATE TABLE bench_scratch (LIKE metrics_observation INCLUDING DEFAULTS INCLUDING IDENTITY)"
        )
        conn.commit()
        started = time.perf_counter()
        with (
            conn.cursor() as cursor,
            cursor.copy(
                "COPY bench_scratch (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)"
                " FROM STDIN (FORMAT BINARY)"
            ) as copy,
        ):
            copy.set_types(["int8", "int8", "int8", "float8", "text", "timestamptz", "text", "text", "jsonb"])
            for row in typed:
                copy.write_row(row)
        conn.commit()
        elapsed = time.perf_counter() - started
        conn.execute("DROP TABLE bench_scratch")
        conn.commit()
    return elapsed


def clear(definition) -> None:
    """Remove earlier benchmark rows and vacuum, so no run inserts into an index bloated by the last."""
    Observation.objects.filter(definition=definition).delete()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE metrics_observation")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    args = parser.parse_args()

    definition, legacy, rebuilt, workload, token = reference_data()
    clear(definition)
    connection.close()
    rows = make_rows(args.rows)

    api_seconds = run_api(rows, args.batch, token)
    raw_seconds = run_raw_copy(
        rows, definition.pk, {"bench-legacy": legacy.pk, "bench-rebuilt": rebuilt.pk}, workload.pk
    )
    clear(definition)

    api_rate, raw_rate = args.rows / api_seconds, args.rows / raw_seconds
    print(f"rows: {args.rows:,} in batches of {args.batch:,}")
    print(f"API (gunicorn, 2 workers, JSON): {api_rate:>12,.0f} rows/s  ({api_seconds:.2f} s)")
    print(f"raw psycopg binary COPY:         {raw_rate:>12,.0f} rows/s  ({raw_seconds:.2f} s)")
    print(f"ratio API / raw COPY: {api_rate / raw_rate:.2f}  (target ≥ 0.5)")


if __name__ == "__main__":
    main()
