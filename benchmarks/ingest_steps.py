"""Where a 10,000-row JSON batch's time goes: each step of the ingest path, in-process, with the CPU
it used in this process and in its PostgreSQL backend (Linux /proc, 10 ms ticks: averaged over many
batches). Companion to benchmarks/ingest.py, which measures the same path end to end over HTTP.

    DATABASE_URL=... .venv/bin/python benchmarks/ingest_steps.py [--batches 40] [--batch 10000]

Batches are new runs, one after another in time, as live ingest sends them and as ingest.py posts
them, so every batch takes the direct copy. The steps are those of metrics.ingest.service._ingest
and metrics.ingest.write.rows_write, called one by one so each can be timed.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import orjson
from _setup import reference_data, remove_observations
from django.db import connection, transaction
from ingest import cpu_seconds, make_rows

from metrics.ingest import write
from metrics.ingest.check import DEFINITION, WORKLOAD, Lookups, check_rows
from metrics.ingest.formats import decode_rows
from metrics.models import IngestBatch

STEPS = ["decode", "lookups", "check", "batch row", "lock references", "copy", "commit"]


def batch_steps(body: bytes, backend_pid: int) -> list[tuple[float, float, float]]:
    """(wall, client CPU, server CPU) seconds of each step of one batch."""
    marks = []

    def mark() -> None:
        marks.append((time.perf_counter(), time.process_time(), cpu_seconds([backend_pid])[backend_pid]))

    mark()
    typed = decode_rows(body, "application/json")
    mark()
    lookups = Lookups()
    mark()
    valid, errors = check_rows(typed, lookups)
    if errors:
        raise SystemExit(f"the batch failed the check: {errors[:3]}")
    mark()
    with transaction.atomic():
        batch = IngestBatch.objects.create(
            received=len(valid),
            inserted=len(valid),
            definition_ids=valid.distinct(DEFINITION),
            workload_ids=valid.distinct(WORKLOAD),
        )
        mark()
        with connection.cursor() as cursor:
            raw = cursor.cursor
            write._lock_references(raw, valid)
            mark()
            with transaction.atomic():
                write._copy_direct(raw, valid, batch.pk)
            mark()
    mark()
    return [tuple(after[i] - before[i] for i in range(3)) for before, after in pairwise(marks)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--batch", type=int, default=10_000)
    args = parser.parse_args()

    definition, *_ = reference_data()
    remove_observations(definition=definition)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend_pid = cursor.fetchone()[0]
    start = datetime.now(UTC) - timedelta(hours=1)
    rows = make_rows(args.batches * args.batch, start)
    bodies = [
        orjson.dumps({"observations": rows[i : i + args.batch]}) for i in range(0, len(rows), args.batch)
    ]
    batch_steps(bodies[0], backend_pid)  # first-use costs (imports, caches) are not per batch
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for body in bodies[1:]:
        for name, used in zip(STEPS, batch_steps(body, backend_pid), strict=True):
            totals[name] = [total + part for total, part in zip(totals[name], used, strict=True)]
    remove_observations(definition=definition)

    measured = len(bodies) - 1
    print(f"{measured} batches of {args.batch:,} rows; per batch, in ms:")
    print(f"{'step':<18}{'wall':>8}{'client CPU':>12}{'server CPU':>12}")
    for name in STEPS:
        wall, client, server = (1000 * seconds / measured for seconds in totals[name])
        print(f"{name:<18}{wall:>8.2f}{client:>12.2f}{server:>12.2f}")
    wall, client, server = (1000 * sum(t[i] for t in totals.values()) / measured for i in range(3))
    print(f"{'total':<18}{wall:>8.2f}{client:>12.2f}{server:>12.2f}")


if __name__ == "__main__":
    main()
