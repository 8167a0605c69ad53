"""Comparison endpoint latency vs the raw percentile SQL on the same data, same run.

    DATABASE_URL=... .venv/bin/python benchmarks/compare.py [--sizes 1000000 10000000] [--repeat 5]

For each size, fills the benchmark metric with that many observations (half per system, generated
in PostgreSQL), then times GET /api/v1/comparisons/ (in-process Django test client: statistics,
Mann–Whitney U, serialisation) against the bare percentile_cont query. Prints medians and the ratio
(target ≤ 3×).
"""

from __future__ import annotations

import argparse
import statistics
import time

from _setup import BENCH_METRIC, reference_data, remove_observations
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

RAW_SQL = """
SELECT system_id, count(*), avg(value),
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY value), min(value), max(value)
FROM metrics_observation WHERE definition_id = %s AND system_id IN (%s, %s) GROUP BY system_id
"""
FILL_SQL = """
INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)
SELECT %(definition)s, CASE WHEN i %% 2 = 0 THEN %(legacy)s ELSE %(rebuilt)s END, %(workload)s,
       100 + (i %% 2) * 3 + random() * 50, 'ms', now() - interval '60 days' + i * interval '1 ms',
       'bench-' || (i / 1000), '', '{}'::jsonb
FROM generate_series(1, %(count)s) AS i
"""


def median_ms(action, repeat: int) -> float:
    action()  # warm caches
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    definition, legacy, rebuilt, workload, _ = reference_data()
    client = Client()
    client.force_login(User.objects.get(username="bench-ingest"))
    url = f"/api/v1/comparisons/?metric={BENCH_METRIC}&baseline=bench-legacy&candidate=bench-rebuilt"

    def endpoint():
        response = client.get(url)
        assert response.status_code == 200, response.content[:300]

    def raw():
        with connection.cursor() as cursor:
            cursor.execute(RAW_SQL, [definition.pk, legacy.pk, rebuilt.pk])
            cursor.fetchall()

    for size in args.sizes:
        remove_observations(definition=definition)
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
        api_ms, raw_ms = median_ms(endpoint, args.repeat), median_ms(raw, args.repeat)
        print(
            f"{size:>11,} observations: endpoint {api_ms:8.1f} ms, raw percentile SQL {raw_ms:8.1f} ms, "
            f"ratio {api_ms / raw_ms:.2f}× (target ≤ 3×)"
        )
    remove_observations(definition=definition)


if __name__ == "__main__":
    main()
