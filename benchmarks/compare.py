"""Comparison endpoint latency vs the raw percentile SQL on the same data, same run; worker memory.

    DATABASE_URL=... .venv/bin/python benchmarks/compare.py [--sizes 1000000 10000000] [--repeat 5]
        [--work-mem 64MB]

For each size, fills the benchmark metric with that many observations (half per system, spread over
60 days, generated in PostgreSQL), rebuilds its day rollups (timed: the catch-up cost of a bulk load),
then times GET /api/v1/comparisons/ (in-process Django test client: statistics, Mann–Whitney U,
serialisation; over ROLLUP_THRESHOLD rows a side it reads the rollups) against the bare exact
percentile_cont query. Both run with the same work_mem (the server's default, or --work-mem for every
connection of this process through PGOPTIONS) and the same indexes. Prints medians,
`ratio compare-<size>: <x>` (target ≤ 0.25 at 10M) and the peak memory of a fresh worker process
running one comparison against its idle memory (target ≤ 2×).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

if "--work-mem" in sys.argv:  # before any connection: libpq applies PGOPTIONS to every one of them
    os.environ["PGOPTIONS"] = f"-c work_mem={sys.argv[sys.argv.index('--work-mem') + 1]}"

from _setup import BENCH_METRIC, reference_data, remove_observations
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from metrics.rollups.maintain import rollups_rebuild

RAW_SQL = """
SELECT system_id, count(*), avg(value),
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY value), min(value), max(value)
FROM metrics_observation WHERE definition_id = %s AND system_id IN (%s, %s) GROUP BY system_id
"""
FILL_SQL = """
INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)
SELECT %(definition)s, CASE WHEN i %% 2 = 0 THEN %(legacy)s ELSE %(rebuilt)s END, %(workload)s,
       100 + (i %% 2) * 3 + random() * 50, 'ms', now() - interval '60 days' + i * (interval '60 days' / %(count)s),
       'bench-' || (i / 1000), '', '{}'::jsonb
FROM generate_series(1, %(count)s) AS i
"""
# A fresh process: its resident memory once Django, numpy and scipy are loaded and one small
# comparison ran (idle), then its peak over one comparison of the benchmark metric.
MEMORY_PROBE = """
import resource, sys
sys.path.insert(0, "benchmarks")
from _setup import BENCH_METRIC
from metrics.models import MetricDefinition, System
from metrics.selectors import comparison_compute
from metrics.inference import infer
import numpy as np
infer(statistic="distribution", direction="lower_is_better", baseline=np.arange(1.0, 50), candidate=np.arange(2.0, 60))
definition = MetricDefinition.objects.get(key=BENCH_METRIC, version=1)
legacy, rebuilt = System.objects.get(key="bench-legacy"), System.objects.get(key="bench-rebuilt")
idle = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = comparison_compute(definition=definition, baseline=legacy, candidate=rebuilt, statistic="distribution")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(idle, peak, result.approximate)
"""


def median_ms(action, repeat: int) -> float:
    action()  # warm caches
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def worker_memory() -> tuple[int, int, bool]:
    """(idle KiB, peak KiB, approximate) of a fresh process running one comparison."""
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout.split()
    return int(out[-3]), int(out[-2]), out[-1] == "True"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work-mem", help="work_mem for every connection (default: the server's)")
    args = parser.parse_args()

    definition, legacy, rebuilt, workload, _ = reference_data()
    client = Client()
    client.force_login(User.objects.get(username="bench-ingest"))
    url = f"/api/v1/comparisons/?metric={BENCH_METRIC}&baseline=bench-legacy&candidate=bench-rebuilt"

    def endpoint():
        response = client.get(url)
        assert response.status_code == 200, response.content[:300]
        return response.json()

    def raw():
        with connection.cursor() as cursor:
            cursor.execute(RAW_SQL, [definition.pk, legacy.pk, rebuilt.pk])
            cursor.fetchall()

    with connection.cursor() as cursor:
        cursor.execute("SHOW work_mem")
        print(f"work_mem (endpoint and raw query alike): {cursor.fetchone()[0]}")
    for size in args.sizes:
        remove_observations(definition=definition)
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(
                FILL_SQL,
                {
                    "definition": definition.pk,
                    "legacy": legacy.pk,
                    "rebuilt": rebuilt.pk,
                    "workload": workload.pk,
                    "count": size,
                },
            )
            cursor.execute("VACUUM ANALYZE metrics_observation")
        fill_s = time.perf_counter() - started
        started = time.perf_counter()
        rollup_rows = rollups_rebuild(definition_ids=[definition.pk])
        rebuild_s = time.perf_counter() - started
        approximate = endpoint()["approximate"]
        api_ms, raw_ms = median_ms(endpoint, args.repeat), median_ms(raw, args.repeat)
        idle, peak, probe_approximate = worker_memory()
        label = f"{size / 1e6:g}M" if size >= 1_000_000 else f"{size / 1e3:g}k"
        print(
            f"{size:>11,} observations (filled in {fill_s:.1f} s; rollups rebuilt in {rebuild_s:.1f} s, "
            f"{rollup_rows} day rows): endpoint {api_ms:8.1f} ms ({'rollups' if approximate else 'exact'}), "
            f"raw percentile SQL {raw_ms:8.1f} ms; worker memory idle {idle / 1024:.0f} MiB, peak "
            f"{peak / 1024:.0f} MiB ({peak / idle:.2f}×, {'rollups' if probe_approximate else 'exact'})"
        )
        print(f"ratio compare-{label}: {api_ms / raw_ms:.3f}")
    remove_observations(definition=definition)


if __name__ == "__main__":
    main()
