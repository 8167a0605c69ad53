"""Ingest CPU: the HTTP batch endpoint end to end vs raw psycopg binary COPY, same rows, same table, same phase.

    DATABASE_URL=... .venv/bin/python benchmarks/ingest.py [--rows 1000000] [--batch 10000]
        [--prefill N] [--prefill-days 7] [--repeat 3]

Compares CPU time, not wall time (benchmarks/_measure.py): on a shared 2-core machine the API's rate
rose with the cores it got, the CPU it needs does not. Per row:

- the API: gunicorn (2 workers, JSON batches of 10,000 rows over 4 client connections), the PostgreSQL
  backends of those workers (application_name `bench-api`), and the follow-ups until the rollups are
  fresh: after each batch the posting thread runs the refresh task's function (metrics.tasks
  rollups_refresh) in-process, as a worker would run the task the batch queued; its thread CPU and its
  backend's count. The broker (CELERY_BROKER_URL, which `make bench` gives a Redis database no worker
  reads) only receives the queued messages.
- raw binary COPY of the same rows, already typed, into metrics_observation itself (same key, indexes,
  partitions and session settings): the client's CPU and its backend's.

`ratio ingest-cpu-indexed` = COPY CPU per row ÷ API CPU per row into the empty table (target ≥ 0.8).
With `--prefill N`, N rows of the metric are stored over the `--prefill-days` before the measured rows
(so the day the batches land in already holds many rows, as a busy metric's does) and both sides run
again, alternating in that same phase: `ratio ingest-cpu-prefilled` (target ≥ 0.8). Each side's run is
the median (by CPU) of `--repeat` alternating runs; wall rates are printed beside, for reference.
`ratio ingest-cpu-ceiling` (reference) is COPY's CPU ÷ (COPY's CPU + decoding the same JSON bodies and
typing each row in Python, nothing else): the most a JSON endpoint in Python could reach here.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import orjson
from _measure import backends, backends_except, connect, cpu_seconds, cpu_since, load, target
from _setup import BENCH_METRIC, gunicorn_serving, reference_data, remove_observations
from django.conf import settings
from django.db import connection

__all__ = ["connect", "copy_rows", "cpu_seconds", "cpu_since", "gunicorn_workers", "make_rows"]
API_APPLICATION = "bench-api"  # PGAPPNAME of the gunicorn workers: their backends, told apart


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


def gunicorn_workers(server_pid: int) -> list[int]:
    try:
        return [
            int(pid) for pid in Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
        ]
    except OSError:
        return []


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


def follow_ups() -> float:
    """Run, in this thread, what the batch queued for a worker: the rollup refresh until its marks are
    cleared (the task's own function, whichever implementation it has); this thread's CPU seconds."""
    from metrics.tasks import rollups_refresh

    started = time.thread_time()
    rollups_refresh()
    used = time.thread_time() - started
    connection.close()  # back to the pool: its backend stays, and with it the CPU /proc shows
    return used


def stale_marks() -> int:
    """What the rollups still lack: days marked stale by corrections and batches' deltas not yet folded."""
    from metrics.rollups.incremental import rollups_pending

    pending = rollups_pending()
    connection.close()
    return pending


def run_api(
    rows: list[dict], batch: int, token: str, base: str, server_pid: int
) -> tuple[float, dict[str, float]]:
    """(wall seconds, CPU seconds by part) of posting every row, with the follow-ups, until fresh."""
    url = f"{base}/api/v1/observations/batch/"
    bodies = [orjson.dumps({"observations": rows[i : i + batch]}) for i in range(0, len(rows), batch)]
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    # One keep-alive client per thread: a new httpx.Client per request builds an SSL context each
    # time, which is the benchmark's own CPU, not the API's.
    clients = threading.local()
    follow_up_cpu: list[float] = []

    def post(body: bytes) -> int:
        if not hasattr(clients, "client"):
            clients.client = httpx.Client(timeout=300)
        response = clients.client.post(url, content=body, headers=headers)
        if response.status_code != 201:
            raise SystemExit(f"API answered {response.status_code}: {response.text[:300]}")
        follow_up_cpu.append(follow_ups())
        return response.json()["inserted"]

    connection.close()  # the pool holds 4: one for each posting thread's follow-ups
    with connect() as watcher:
        server = cpu_seconds(gunicorn_workers(server_pid))
        api_db = cpu_seconds(backends(watcher, API_APPLICATION))
        other_db = cpu_seconds(backends_except(watcher, API_APPLICATION))
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=4) as pool:
            inserted = sum(pool.map(post, bodies))
            # Read while the threads (and their pooled connections) are still there.
            if stale_marks():
                follow_up_cpu.append(follow_ups())
            elapsed = time.perf_counter() - started
            cpu = {
                "gunicorn": cpu_since(server, cpu_seconds(gunicorn_workers(server_pid))),
                "its PostgreSQL": cpu_since(api_db, cpu_seconds(backends(watcher, API_APPLICATION))),
                "follow-ups": sum(follow_up_cpu),
                "their PostgreSQL": cpu_since(
                    other_db, cpu_seconds(backends_except(watcher, API_APPLICATION))
                ),
            }
    assert inserted == len(rows), f"inserted {inserted} of {len(rows)}"
    assert not stale_marks(), "rollups not fresh after the follow-ups"
    return elapsed, cpu


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
       100 + random() * 50, 'ms', %(before)s - %(span)s * (1 - i::float8 / %(count)s),
       'prefill-' || (i / 1000), '', '{}'::jsonb
FROM generate_series(0, %(count)s - 1) AS i
"""


def prefill(
    count: int, *, days: int, before: datetime, definition_id: int, legacy: int, rebuilt: int, workload: int
) -> float:
    """`count` rows spread over the `days` before `before`, written server-side, and their rollups
    (as the batches that brought them would have left them); seconds taken."""
    from metrics.partitions import observations_partitions_create
    from metrics.rollups.maintain import rollups_rebuild

    started = time.perf_counter()
    observations_partitions_create(since=before - timedelta(days=days))
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
                "span": timedelta(days=days),
            },
        )
        conn.execute("VACUUM ANALYZE metrics_observation")
    rollups_rebuild(definition_ids=[definition_id])
    connection.close()
    return time.perf_counter() - started


def json_floor_cpu(rows: list[dict], batch: int) -> dict[str, float]:
    """The least CPU any Python JSON endpoint spends on these rows before its COPY: decoding the same
    bodies the API gets and making one typed tuple per row, with no check, auth or HTTP at all."""
    bodies = [orjson.dumps({"observations": rows[i : i + batch]}) for i in range(0, len(rows), batch)]
    started = time.process_time()
    for body in bodies:
        typed = [
            (r["metric"], r["system"], r["workload"], float(r["value"]), r["unit"],
             datetime.fromisoformat(r["observed_at"]), r.get("run_id", ""), r.get("source", ""), r.get("tags") or {})
            for r in orjson.loads(body)["observations"]
        ]  # fmt: skip
        del typed
    return {"decode and type": time.process_time() - started}


def per_row_us(cpu: dict[str, float], rows: int) -> float:
    return sum(cpu.values()) / rows * 1e6


def describe(cpu: dict[str, float], rows: int) -> str:
    parts = ", ".join(f"{name} {seconds / rows * 1e6:.1f}" for name, seconds in cpu.items())
    return f"{per_row_us(cpu, rows):.1f} µs CPU a row ({parts})"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument(
        "--prefill", type=int, default=0, help="also measure into a table holding this many rows"
    )
    parser.add_argument("--prefill-days", type=int, default=7, help="the days before that hold them")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each side, alternating; the median run counts"
    )
    args = parser.parse_args()
    if not settings.CELERY_BROKER_URL:
        raise SystemExit(
            "Set CELERY_BROKER_URL to a Redis database no worker consumes (make bench does): without a broker"
            " each request would also run the follow-ups inside it, and they would be counted twice."
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
    with gunicorn_serving(
        "config.settings.local",
        workers=2,
        args=["--timeout", "300"],
        env={"DJANGO_DEBUG": "false", "PGAPPNAME": API_APPLICATION},
    ) as (base, server):

        def measure(phase: str) -> dict[str, tuple[float, dict[str, float]]]:
            """The median by CPU of `--repeat` alternating runs of each side: the machine's other work
            comes and goes, and alternating spreads it over both."""
            runs: dict[str, list] = {"API": [], "COPY": []}
            for _ in range(args.repeat):
                runs["API"].append(run_api(rows, args.batch, token, base, server.pid))
                measured_rows_remove(definition.pk, start)
                runs["COPY"].append(run_raw_copy(rows, definition.pk, system_ids, workload.pk, indexed=True))
                measured_rows_remove(definition.pk, start)
            chosen = {
                name: sorted(results, key=lambda run: sum(run[1].values()))[len(results) // 2]
                for name, results in runs.items()
            }
            for name, (seconds, cpu) in chosen.items():
                print(
                    f"{phase}, {name}: {describe(cpu, args.rows)}; wall {args.rows / seconds:,.0f} rows/s "
                    f"({seconds:.2f} s)  {load()}",
                    flush=True,
                )
            return chosen

        print(
            f"rows: {args.rows:,} in batches of {args.batch:,}; {os.cpu_count()} CPU cores; median of "
            f"{args.repeat} run(s); session settings {app_settings}  {load()}",
            flush=True,
        )
        empty = measure("empty table")
        unindexed = run_raw_copy(rows, definition.pk, system_ids, workload.pk, indexed=False)
        print(f"raw COPY, unindexed scratch table: {describe(unindexed[1], args.rows)}  {load()}")
        filled = None
        if args.prefill:
            took = prefill(
                args.prefill,
                days=args.prefill_days,
                before=start - timedelta(seconds=1),
                definition_id=definition.pk,
                legacy=legacy.pk,
                rebuilt=rebuilt.pk,
                workload=workload.pk,
            )
            with connect() as conn:
                (same_day,) = conn.execute(
                    "SELECT count(*) FROM metrics_observation WHERE definition_id = %s"
                    " AND observed_at >= date_trunc('day', %s::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
                    [definition.pk, start],
                ).fetchone()
            print(
                f"prefilled {args.prefill:,} rows over the {args.prefill_days} days before, with their rollups,"
                f" in {took:.0f} s; the measured rows' first day already holds {same_day:,}  {load()}",
                flush=True,
            )
            filled = measure(f"into {args.prefill:,} rows")
    remove_observations(definition=definition)

    def ratio(results: dict[str, tuple[float, dict[str, float]]]) -> float:
        return per_row_us(results["COPY"][1], args.rows) / per_row_us(results["API"][1], args.rows)

    target(
        "ingest-cpu-unindexed",
        per_row_us(unindexed[1], args.rows) / per_row_us(empty["API"][1], args.rows),
        "reference",
    )
    # What the 0.8 asks of the API, next to what Python alone costs: COPY's CPU ÷ (COPY's CPU + the
    # decode-and-type floor) is the most any JSON endpoint written in Python could reach.
    floor = json_floor_cpu(rows, args.batch)
    print(f"JSON decode and type, in-process, no checks: {describe(floor, args.rows)}  {load()}")
    copy_us = per_row_us(empty["COPY"][1], args.rows)
    target("ingest-cpu-ceiling", copy_us / (copy_us + per_row_us(floor, args.rows)), "reference")
    target("ingest-cpu-indexed", ratio(empty), "≥ 0.8")
    if filled is not None:
        target("ingest-cpu-prefilled", ratio(filled), "≥ 0.8")


if __name__ == "__main__":
    main()
