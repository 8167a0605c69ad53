"""Reads by time cost what the window holds: the same 30-day window in a 1M- and a 10M-row series.

    DATABASE_URL=... .venv/bin/python benchmarks/window.py [--sizes 1000000 10000000] [--repeat 15]

For each size, fills the benchmark metric (four systems, two workloads) so that its last 30 days hold
the same 20,000 rows and the rest of the series lies in the 11 months before, its months partitioned
as the beat task and `observations_partitions_create --since` would leave them. Then times, in the
app's own code on metrics_observation: the comparison window (metrics.selectors.comparison.sql,
two systems) and the first page of the newest-first observations list for that window (API, in
process). Prints the fastest of `--repeat` runs (the least disturbed by other work on the machine),
the buffers PostgreSQL touched for the window, and `ratio window-growth: <10M ÷ 1M>` (target ≤ 1.2).
"""

from __future__ import annotations

import argparse
import time
from datetime import timedelta

from _setup import BENCH_METRIC, reference_data, remove_observations
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.utils import timezone

from metrics.models import System, Workload
from metrics.partitions import observations_partitions_create
from metrics.selectors.comparison.sql import SAMPLES_SQL, sides_fetch, window_filters

WINDOW_DAYS, WINDOW_ROWS, HISTORY_DAYS = 30, 20_000, 335
FILL_SQL = """
INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)
SELECT %(definition)s, (%(systems)s::bigint[])[1 + i %% 4], (%(workloads)s::bigint[])[1 + i %% 2],
       100 + random() * 50, 'ms',
       CASE WHEN i < %(window)s THEN %(now)s - (i::float8 / %(window)s) * %(window_span)s
            ELSE %(now)s - %(window_span)s - ((i - %(window)s)::float8 / (%(total)s - %(window)s)) * %(history)s END,
       'bench-' || (i / 1000), '', '{}'::jsonb
FROM generate_series(0, %(total)s - 1) AS i
"""


def fastest_ms(action, repeat: int) -> float:
    action()  # warm the cache: what is measured is the read, not the disk
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return min(samples)


def buffers(sql: str, params: dict) -> int:
    """Shared buffers (8 KiB pages) PostgreSQL touched: the read's cost, whatever else runs."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0][0]["Plan"]
    return plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs=2, default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()

    definition, legacy, rebuilt, workload, _ = reference_data()
    systems = [legacy, rebuilt] + [
        System.objects.get_or_create(key=f"bench-extra-{i}", defaults={"name": f"bench extra {i}"})[0]
        for i in (1, 2)
    ]
    other_workload, _ = Workload.objects.get_or_create(
        key="bench-workload-2", defaults={"name": "bench 2", "size": "small", "criticality": "peripheral"}
    )
    now = timezone.now()
    since, until = now - timedelta(days=WINDOW_DAYS), now
    observations_partitions_create(since=now - timedelta(days=WINDOW_DAYS + HISTORY_DAYS))
    client = Client()
    client.force_login(User.objects.get(username="bench-ingest"))
    list_url = "/api/v1/observations/"
    list_query = {"metric": BENCH_METRIC, "since": since.isoformat(), "until": until.isoformat()}
    filters, window_params = window_filters(None, since, until)
    window_params.update(definition=definition.pk, baseline=legacy.pk, candidate=rebuilt.pk)

    def window():
        baseline, candidate = sides_fetch(
            definition=definition, baseline=legacy, candidate=rebuilt, since=since, until=until
        )
        assert baseline.stats.n + candidate.stats.n == WINDOW_ROWS // 2

    def page():
        response = client.get(list_url, list_query)
        assert response.status_code == 200 and len(response.json()["results"]) == 100

    measured = {}
    for size in args.sizes:
        remove_observations(definition=definition)
        with connection.cursor() as cursor:
            cursor.execute(
                FILL_SQL,
                {
                    "definition": definition.pk,
                    "systems": [system.pk for system in systems],
                    "workloads": [workload.pk, other_workload.pk],
                    "window": WINDOW_ROWS,
                    "total": size,
                    "now": now - timedelta(microseconds=1),
                    "window_span": timedelta(days=WINDOW_DAYS),
                    "history": timedelta(days=HISTORY_DAYS),
                },
            )
            cursor.execute("VACUUM ANALYZE metrics_observation")
        measured[size] = (
            fastest_ms(window, args.repeat),
            buffers(SAMPLES_SQL.format(filters=filters), window_params),
            fastest_ms(page, args.repeat),
        )
        window_ms, window_buffers, page_ms = measured[size]
        print(
            f"{size:>11,} rows, 30-day window of {WINDOW_ROWS:,}: comparison read {window_ms:7.1f} ms "
            f"({window_buffers:,} buffers), list page {page_ms:7.1f} ms",
            flush=True,
        )
    remove_observations(definition=definition)

    (small_ms, small_buffers, small_page), (large_ms, large_buffers, large_page) = (
        measured[size] for size in args.sizes
    )
    print(f"buffers window-growth: {large_buffers / small_buffers:.2f}")
    print(f"ratio list-growth: {large_page / small_page:.2f}")
    print(f"ratio window-growth: {large_ms / small_ms:.2f}  (target ≤ 1.2)")


if __name__ == "__main__":
    main()
