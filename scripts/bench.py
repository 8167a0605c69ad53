"""`make bench`: every benchmark at the sizes of the README's targets, on a database of its own.

    .venv/bin/python scripts/bench.py [--only NAME ...] [--quick]

Creates (or empties) the database `<DATABASE_URL's name>_bench` on the same server, migrates it, runs
each script of BENCHMARKS with DATABASE_URL pointing there, streams its output, and ends with the
target lines of all of them (`[ratio ]<name>: <x>  (target <op> <y>)  load <l>`, benchmarks/_measure.py)
as a markdown table with the run's date, size and load: the README's performance table is that table,
pasted from one run. The benchmarks REINDEX and VACUUM the observations table and fill it with tens of
millions of rows, so they never run on a database that anything else uses. `--quick` runs every
benchmark at a tenth of the size, to check they work (the ratios then say little).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from redis import Redis

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

# name -> (script, arguments at target size, arguments with --quick)
BENCHMARKS: dict[str, tuple[str, list[str], list[str]]] = {
    "ingest": (
        "ingest.py",
        # The median (by CPU) of three alternating runs of each side, empty and with 10M rows stored.
        ["--rows", "1000000", "--prefill", "10000000", "--repeat", "3"],
        ["--rows", "100000", "--prefill", "1000000", "--repeat", "3"],
    ),
    "window": ("window.py", [], ["--sizes", "100000", "1000000"]),
    "compare": (
        "compare.py",
        ["--size", "10000000", "--sweep-rows", "200000"],
        ["--size", "1000000", "--sweep-rows", "20000"],
    ),
    "gates": ("gates.py", ["--observations", "10000000"], ["--observations", "1000000"]),
    "metric-page": ("metric_page.py", ["--observations", "10000000"], ["--observations", "1000000"]),
    "http-reads": ("http_reads.py", [], ["--seconds", "3"]),
    "mixed-load": (
        "mixed_load.py",
        ["--observations", "10000000", "--seconds", "60"],
        ["--observations", "1000000", "--seconds", "10"],
    ),
}
TARGET_LINE = re.compile(
    r"^(?P<name>(?:ratio )?[\w-]+): (?P<value>\S+)\s+\(target (?P<target>[^)]*)\)\s+load (?P<load>\S+)(?P<note>.*)$"
)


def bench_database_url(base_url: str) -> str:
    parts = urlsplit(base_url)
    name = parts.path.lstrip("/") or "rebuild_tracker"
    return urlunsplit(parts._replace(path=f"/{name}_bench"))


def database_recreate(url: str) -> None:
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def run(script: str, args: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    ratios = []
    process = subprocess.Popen(
        [PYTHON, str(ROOT / "benchmarks" / script), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        print(line, end="", flush=True)
        if TARGET_LINE.match(line.rstrip()):
            ratios.append(line.rstrip())
    return process.wait(), ratios


def met(value: str, goal: str) -> str:
    """Whether `value` meets `goal` ("≥ 0.8", "≤ 1.5", "< 150", "= 1.00", "= 0"; anything else: "—")."""
    found = re.match(r"^([≥≤<>=])\s*([-\d.]+)", goal)
    if not found:
        return "—"
    x, y = float(value), float(found[2])
    ok = {"≥": x >= y, "≤": x <= y, "<": x < y, ">": x > y, "=": abs(x - y) < 1e-9}[found[1]]
    return "met" if ok else "**not met**"


def markdown_table(lines: list[str], *, quick: bool, started_load: float) -> str:
    """The README's performance table: one row per target line of this run."""
    rows = [
        f"Figures of one `make bench{' BENCH_ARGS=--quick' if quick else ''}` run, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load (1 min) "
        f"{started_load:.2f} at the start and {os.getloadavg()[0]:.2f} at the end; CPU time, not wall time.",
        "",
        "| line | value | target | | load |",
        "|---|---|---|---|---|",
    ]
    for line in lines:
        found = TARGET_LINE.match(line)
        assert found is not None
        note = found["note"].strip()
        name = f"`{found['name']}`" + (f" ({note})" if note else "")
        rows.append(
            f"| {name} | {found['value']} | {found['target']} | {met(found['value'], found['target'])} "
            f"| {found['load']} |"
        )
    return "\n".join(rows)


def run_all(names: list[str], *, quick: bool, env: dict[str, str]) -> tuple[list[str], list[str]]:
    ratios, failed = [], []
    for name in names:
        script, full, small = BENCHMARKS[name]
        arguments = small if quick else full
        print(f"\n== {name}: benchmarks/{script} {' '.join(arguments)}", flush=True)
        started = time.monotonic()
        code, found = run(script, arguments, env)
        print(f"== {name}: exit {code} after {time.monotonic() - started:.0f} s", flush=True)
        ratios += found
        if code:
            failed.append(name)
    return ratios, failed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="+", choices=sorted(BENCHMARKS), help="run only these")
    parser.add_argument("--quick", action="store_true", help="a tenth of the sizes: checks they run")
    args = parser.parse_args()
    started_load = os.getloadavg()[0]

    url = bench_database_url(os.environ["DATABASE_URL"])
    database_recreate(url)
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_DEBUG": "false"}
    # A broker of the benchmarks' own, which no worker consumes: the API then queues its follow-ups
    # (rollup refreshes, gate evaluations) as in production, where a worker runs them apart from the
    # request. Without one they would run inside each ingest request (CELERY_TASK_ALWAYS_EAGER), where a
    # day's rollup is recomputed after every batch of that day. Never the caller's broker: a worker
    # listening there would run the tasks against another database.
    from embedded_redis import redis_start, redis_stop

    redis, redis_url = redis_start(ROOT / ".data" / "bench", persistent=True)
    env["CELERY_BROKER_URL"] = f"{redis_url}/2"
    Redis.from_url(env["CELERY_BROKER_URL"]).flushdb()  # what an earlier run queued (append-only file)
    # The read caches (tokens, freeze facts) are on with a shared cache, as in production: without
    # CACHE_URL the same embedded Redis serves it, as in `make run`.
    env.setdefault("CACHE_URL", f"{redis_url}/1")
    try:
        subprocess.run([PYTHON, "manage.py", "migrate", "--no-input", "-v0"], cwd=ROOT, env=env, check=True)
        ratios, failed = run_all(args.only or list(BENCHMARKS), quick=args.quick, env=env)
    finally:
        redis_stop(redis)
    print("\n== summary\n")
    print(markdown_table(ratios, quick=args.quick, started_load=started_load))
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
