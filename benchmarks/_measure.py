"""What the benchmarks measure with (issue 27): CPU time, not wall time, and the load beside every figure.

On a shared 2-core machine wall time says how busy the machine was; the CPU a piece of work used (the
benchmark's process or thread, the PostgreSQL backends doing its queries, a worker's follow-ups) says
what the work costs. /proc gives each process's user + system CPU in ticks of 10 ms, so a figure is the
total over many calls divided by their number. Parallel query is off for every session of a benchmark
(_setup.py sets PGOPTIONS): a parallel worker's CPU would be in a process that is gone when it is read.

`target()` prints a line `[ratio ]<name>: <value>  (target <op> <x>)  load <1-minute load average>`;
scripts/bench.py collects these into the README's table.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import psycopg
from django.conf import settings

TICKS = os.sysconf("SC_CLK_TCK")


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def target(
    name: str, value: float, goal: str, *, digits: int = 2, ratio: bool = True, note: str = ""
) -> None:
    """A figure with its target ("≥ 0.8", "≤ 1.5", "= 1.00", "< 150", or "reference") and the load now."""
    prefix = "ratio " if ratio else ""
    tail = f"  {note}" if note else ""
    print(f"{prefix}{name}: {value:.{digits}f}  (target {goal})  {load()}{tail}", flush=True)


def cpu_seconds(pids: Iterable[int]) -> dict[int, float]:
    """User + system CPU seconds each process has used so far, from /proc (Linux only)."""
    used = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone, or not Linux
        used[pid] = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    return used


def cpu_since(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU used between two readings; a process new since `before` counts from zero."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def connect() -> psycopg.Connection:
    """A raw autocommit connection to the benchmark database (Django's settings)."""
    dsn = settings.DATABASES["default"]
    return psycopg.connect(
        dbname=dsn["NAME"],
        user=dsn["USER"],
        host=dsn["HOST"] or dsn["OPTIONS"].get("host"),
        port=dsn["PORT"] or None,
        password=dsn["PASSWORD"] or None,
        autocommit=True,
    )


def backends(watcher: psycopg.Connection, application_name: str | None = None) -> list[int]:
    """The client backends of this database other than the watcher's own (those of one application)."""
    sql = (
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
    )
    params: list[str] = []
    if application_name is not None:
        sql += " AND application_name = %s"
        params.append(application_name)
    return [pid for (pid,) in watcher.execute(sql, params).fetchall()]


def backends_except(watcher: psycopg.Connection, application_name: str) -> list[int]:
    rows = watcher.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        " AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name <> %s",
        [application_name],
    ).fetchall()
    return [pid for (pid,) in rows]


def in_process_cpu(
    action: Callable[[], object], repeat: int, watcher: psycopg.Connection
) -> tuple[float, float]:
    """(CPU seconds per call, median wall seconds per call) of `action` run `repeat` times in this
    process after one warm-up call: this process's CPU plus that of every backend of the database
    (the benchmark database serves this process alone; the watcher is left out)."""
    action()
    walls = []
    db_before = cpu_seconds(backends(watcher))
    process_before = time.process_time()
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        walls.append(time.perf_counter() - started)
    process = time.process_time() - process_before
    database = cpu_since(db_before, cpu_seconds(backends(watcher)))
    return (process + database) / repeat, statistics.median(walls)


def request_buffers(request: Callable[[], object]) -> tuple[int, int]:
    """(buffers, queries) of one request: the shared buffers (8 KiB pages, hit or read) of every SELECT
    it ran, explained again with ANALYZE, BUFFERS and the same parameters. Statements are recorded at
    psycopg's cursor, so those the app sends on psycopg's own cursor (binary reads) count too."""
    from django.db import connection

    sent: list[tuple[type, object, object]] = []
    execute = psycopg.Cursor.execute

    def recording(self, query, params=None, **kwargs):  # type: ignore[no-untyped-def]
        sent.append((type(self), query, params))
        return execute(self, query, params, **kwargs)

    psycopg.Cursor.execute = recording  # type: ignore[method-assign]
    try:
        request()
    finally:
        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
    total = 0
    connection.ensure_connection()
    for cursor_class, query, params in sent:
        # The same kind of cursor: Django's binds parameters client-side, psycopg's own server-side.
        with cursor_class(connection.connection) as cursor:
            text = query if isinstance(query, str) else query.as_string(cursor)
            if not text.lstrip().upper().startswith(("SELECT", "WITH")):
                continue
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + text, params)
            plan = cursor.fetchone()[0][0]["Plan"]
            total += plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]
    return total, len(sent)
