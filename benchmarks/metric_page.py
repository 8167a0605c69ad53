"""The metric page over a large series: server time and query count (target: p95 < 150 ms, constant queries).

    DATABASE_URL=... .venv/bin/python benchmarks/metric_page.py [--observations 10000000] [--repeat 40]

Fills the benchmark metric with N observations over a year (half per system, generated in PostgreSQL),
rebuilds its day rollups as ingest would have kept them, then renders GET /metrics/<key>/ in-process
(the Django test client: the whole server-side cost, no network) `--repeat` times. Prints p50/p95 and
the query count, and the same for a 10,000-row series, so a count that grows with the data shows.
"""

from __future__ import annotations

import argparse
import statistics
import time

from _measure import load, target
from _setup import BENCH_METRIC, reference_data, remove_observations
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from metrics.rollups.maintain import rollups_rebuild

FILL_SQL = """
INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)
SELECT %(definition)s, CASE WHEN i %% 2 = 0 THEN %(legacy)s ELSE %(rebuilt)s END, %(workload)s,
       100 + (i %% 2) * 3 + random() * 50, 'ms',
       now() - interval '365 days' + i * (interval '365 days' / %(count)s), 'bench-' || (i / 1000), '', '{}'::jsonb
FROM generate_series(1, %(count)s) AS i
"""
SMALL = 10_000


def fill(size: int) -> None:
    definition, legacy, rebuilt, workload, _ = reference_data()
    remove_observations(definition=definition)
    values = {
        "definition": definition.pk,
        "legacy": legacy.pk,
        "rebuilt": rebuilt.pk,
        "workload": workload.pk,
        "count": size,
    }
    with connection.cursor() as cursor:
        cursor.execute(FILL_SQL, values)
        cursor.execute("VACUUM ANALYZE metrics_observation")
    rollups_rebuild(definition_ids=[definition.pk])


def page_timings(client: Client, repeat: int) -> tuple[float, float, int]:
    url = f"/metrics/{BENCH_METRIC}/"
    assert client.get(url).status_code == 200  # warm caches and the connection
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    # Now: the next request's start empties the connection's query log.
    query_count = len(queries.captured_queries)
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url)
        samples.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))], query_count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--observations", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()

    reference_data()
    # The page renders as in production (DEBUG off): its static files need their manifest.
    call_command("collectstatic", "--no-input", verbosity=0)
    client = Client()
    client.force_login(User.objects.get(username="bench-ingest"))
    results = {}
    for size in (SMALL, args.observations):
        started = time.perf_counter()
        fill(size)
        print(
            f"{size:>11,} observations loaded and rolled up in {time.perf_counter() - started:.0f} s",
            flush=True,
        )
        results[size] = page_timings(client, args.repeat)
        p50, p95, queries = results[size]
        print(
            f"{size:>11,} observations: metric page p50 {p50:.1f} ms, p95 {p95:.1f} ms (wall), {queries} queries"
            f"  {load()}"
        )
    remove_observations(definition=reference_data()[0])
    p95 = results[args.observations][1]
    same = results[SMALL][2] == results[args.observations][2]
    target(
        "metric-page-p95-ms", p95, "< 150", ratio=False, digits=1,
        note=f"at {args.observations:,} observations, wall time",
    )  # fmt: skip
    target(
        "metric-page-query-growth", results[args.observations][2] / results[SMALL][2], "= 1", ratio=False,
        note=f"queries {results[SMALL][2]} → {results[args.observations][2]} ({'constant' if same else 'GROW'})",
    )  # fmt: skip


if __name__ == "__main__":
    main()
