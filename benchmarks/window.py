"""Reads by time cost what the window holds: the same 30-day window in a 1M- and a 10M-row series, at the endpoints.

    DATABASE_URL=... .venv/bin/python benchmarks/window.py [--sizes 1000000 10000000] [--repeat 60]

For each size, fills the benchmark metric (four systems, two workloads) so that its last 30 days hold
the same 20,000 rows and the rest of the series lies in the 11 months before, its months partitioned
as the beat task and `observations_partitions_create --since` would leave them. Then measures, at the
endpoints (the in-process Django test client): GET /api/v1/comparisons/ over that window (two
systems), the first page of the observations list for the metric and window, and the first page of the
list across every metric (no bound: the last 7 days). For each: CPU per request (this process and its
PostgreSQL backends, benchmarks/_measure.py, over `--repeat` requests), the median wall time, and the
shared buffers every query of one request touched. Prints `ratio window-growth` (the comparison's
CPU at the larger size ÷ the smaller), `ratio window-growth-buffers`, `ratio list-growth` (the
slower of the two list pages' CPU ratios) and `ratio list-growth-buffers`; targets ≤ 1.2.
"""

from __future__ import annotations

import argparse
from datetime import timedelta

from _measure import connect, in_process_cpu, load, request_buffers, target
from _setup import BENCH_METRIC, reference_data, remove_observations
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.utils import timezone

from metrics.models import System, Workload
from metrics.partitions import observations_partitions_create
from metrics.rollups.maintain import rollups_rebuild

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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs=2, default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=60)
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
    window = {"since": since.isoformat(), "until": until.isoformat()}
    requests = {
        "comparison": (
            "/api/v1/comparisons/",
            {"metric": BENCH_METRIC, "baseline": "bench-legacy", "candidate": "bench-rebuilt", **window},
        ),
        "list, metric and window": ("/api/v1/observations/", {"metric": BENCH_METRIC, **window}),
        "list, every metric": ("/api/v1/observations/", {}),
    }

    def request(name: str):
        path, query = requests[name]

        def get():
            response = client.get(path, query)
            assert response.status_code == 200, response.content[:300]
            if name == "comparison":
                body = response.json()
                assert body["baseline"]["n"] + body["candidate"]["n"] == WINDOW_ROWS // 2, body
            else:
                assert len(response.json()["results"]) == 100

        return get

    measured: dict[int, dict[str, tuple[float, float, int]]] = {}
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
        rollups_rebuild(definition_ids=[definition.pk])
        measured[size] = {}
        with connect() as watcher:
            for name in requests:
                cpu, wall = in_process_cpu(request(name), args.repeat, watcher)
                buffers, queries = request_buffers(request(name))
                measured[size][name] = (cpu, wall, buffers)
                print(
                    f"{size:>11,} rows, 30-day window of {WINDOW_ROWS:,}: {name}: {cpu * 1000:.2f} ms CPU "
                    f"({wall * 1000:.1f} ms wall), {buffers:,} buffers, {queries} queries  {load()}",
                    flush=True,
                )
    remove_observations(definition=definition)
    rollups_rebuild(definition_ids=[definition.pk])

    small, large = (measured[size] for size in args.sizes)

    def growth(name: str, index: int) -> float:
        return large[name][index] / small[name][index]

    lists = ("list, metric and window", "list, every metric")
    target("window-growth", growth("comparison", 0), "≤ 1.2")
    target("window-growth-buffers", growth("comparison", 2), "≤ 1.2")
    target(
        "list-growth", max(growth(name, 0) for name in lists), "≤ 1.2",
        note=", ".join(f"{name} {growth(name, 0):.2f}" for name in lists),
    )  # fmt: skip
    target(
        "list-growth-buffers", max(growth(name, 2) for name in lists), "≤ 1.2",
        note=", ".join(f"{name} {growth(name, 2):.2f}" for name in lists),
    )  # fmt: skip


if __name__ == "__main__":
    main()
