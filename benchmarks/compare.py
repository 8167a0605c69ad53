"""Comparison CPU: the endpoint vs the raw percentile SQL on the same rows, same run; rollup verdicts vs exact.

    DATABASE_URL=... .venv/bin/python benchmarks/compare.py [--size 10000000] [--sweep-rows 200000]
        [--repeat 5] [--work-mem 64MB]

CPU time, not wall time (benchmarks/_measure.py): this process's and its PostgreSQL backends', per call,
over `--repeat` calls after a warm-up; the median wall time is printed beside. Both sides run with the
same work_mem (the server's default, or --work-mem for every connection through PGOPTIONS) and indexes.

1. Just under settings.ROLLUP_THRESHOLD (a side 1,000 rows under it): GET /api/v1/comparisons/ (the
   in-process Django test client: reads, statistics, Mann–Whitney U, serialisation) ÷ the bare exact
   `percentile_cont` query over the same rows — `ratio compare-exact-path` (target ≤ 1.5).
2. `--size` rows (half per system, 60 days), rollups rebuilt (timed): the same two —
   `ratio compare-rollup-<size>` (target ≤ 0.05 at 10M) — and the peak memory of a fresh worker
   process running one comparison against its idle memory (target ≤ 2×).
3. A sweep: 3 distributions (normal, lognormal, bimodal) × shifts from 0 to 30 % (the candidate's
   values × (1 + shift): worse, the metric being lower-is-better) × p50/p95/p99/mean, each side
   `--sweep-rows` rows over whole past days. Each case is compared twice through the public
   comparison (metrics.public.comparison_compute), on the rollups (ROLLUP_THRESHOLD just under a
   side's rows) and exactly (a threshold no side reaches). `verdict-agreement`: the share of cases whose
   rollup verdict equals the exact one or makes no claim (anything but better / worse /
   no_difference: it cannot tell); `interval-coverage`: the share of rollup intervals (each side's and
   the ratio's) that contain the exact one. Targets: 1.00 both.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

if "--work-mem" in sys.argv:  # before any connection: libpq applies PGOPTIONS to every one of them
    os.environ["PGOPTIONS"] = f"-c work_mem={sys.argv[sys.argv.index('--work-mem') + 1]}"

from _measure import connect, in_process_cpu, load, target
from _setup import BENCH_METRIC, reference_data, remove_observations
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import override_settings

from metrics.models import System
from metrics.public import comparison_compute
from metrics.rollups.maintain import rollups_rebuild

RAW_SQL = """
SELECT system_id, count(*), avg(value),
       percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY value), min(value), max(value)
FROM metrics_observation WHERE definition_id = %s AND system_id IN (%s, %s) GROUP BY system_id
"""
SHIFTS = (0.0, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.3)
DISTRIBUTIONS = ("normal", "lognormal", "bimodal")
SWEEP_STATISTICS = ("p50", "p95", "p99", "mean")
CLAIMS = ("better", "worse", "no_difference")
# One side of a sweep case: `n` draws of a distribution shaped like job latencies (those of
# benchmarks/calibration.py), × scale, spread over whole past days so no window edge cuts a day.
SWEEP_SQL = """
INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)
SELECT %(definition)s, %(system)s, %(workload)s, greatest(x.v, 0.001) * %(scale)s, 'ms',
       %(first)s + g.i * (%(span)s / %(n)s), 'sweep-' || (g.i / 1000), '', '{}'::jsonb
FROM (SELECT i, sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS z, random() AS u
      FROM generate_series(0, %(n)s - 1) AS i) AS g,
     LATERAL (SELECT CASE %(distribution)s::text
                  WHEN 'normal' THEN 100 + 15 * g.z
                  WHEN 'lognormal' THEN exp(ln(100) + 0.75 * g.z)
                  ELSE CASE WHEN g.u < 0.4 THEN 250 + 25 * g.z ELSE 100 + 10 * g.z END END AS v) AS x
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


def fill(size: int, definition, legacy, rebuilt, workload) -> tuple[float, float, int]:
    """The metric's rows replaced by `size` new ones and its rollups rebuilt: (fill s, rebuild s, day rows)."""
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
    return fill_s, time.perf_counter() - started, rollup_rows


def label_of(size: int) -> str:
    return f"{size / 1e6:g}M" if size >= 1_000_000 else f"{size / 1e3:g}k"


def sweep(definition, workload, rows: int) -> None:
    """Rollup comparisons against exact ones over the sweep's cases (the docstring's part 3)."""
    remove_observations(definition=definition)
    today = datetime.combine(datetime.now(UTC).date(), datetime.min.time(), tzinfo=UTC)
    first, span = today - timedelta(days=28), timedelta(days=27)
    cases = []
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.27)")
        for distribution in DISTRIBUTIONS:
            sides = {}
            for shift in (None, *SHIFTS):
                key = f"bench-sweep-{distribution}-{'base' if shift is None else f'{shift:g}'}"
                sides[shift], _ = System.objects.get_or_create(key=key, defaults={"name": key})
                cursor.execute(
                    SWEEP_SQL,
                    {
                        "definition": definition.pk,
                        "system": sides[shift].pk,
                        "workload": workload.pk,
                        "scale": 1.0 + (shift or 0.0),
                        "first": first,
                        "span": span,
                        "n": rows,
                        "distribution": distribution,
                    },
                )
            cases += [(distribution, shift, sides[None], sides[shift]) for shift in SHIFTS]
        cursor.execute("VACUUM ANALYZE metrics_observation")
    rollups_rebuild(definition_ids=[definition.pk])
    print(
        f"sweep: {len(cases)} pairs of {rows:,} rows a side filled and rolled up in "
        f"{time.perf_counter() - started:.0f} s  {load()}",
        flush=True,
    )
    agree = total = covered = intervals = 0
    misses: list[str] = []
    for distribution, shift, baseline, candidate in cases:
        for statistic in SWEEP_STATISTICS:
            answers = {}
            for path, threshold in (("rollups", rows - 1), ("exact", 10**15)):
                with override_settings(ROLLUP_THRESHOLD=threshold):
                    answers[path] = comparison_compute(
                        definition=definition, baseline=baseline, candidate=candidate, statistic=statistic
                    )
            fast, exact = answers["rollups"], answers["exact"]
            if exact.approximate or not fast.approximate:
                print(f"  note: {distribution} {shift:g} {statistic}: rollups approximate={fast.approximate}")
            total += 1
            agreed = fast.verdict == exact.verdict or fast.verdict not in CLAIMS
            agree += agreed
            case = f"{distribution} +{shift:.2%} {statistic}"
            if not agreed:
                misses.append(f"verdict {case}: rollups {fast.verdict}, exact {exact.verdict}")
            for name, outer, inner in (
                ("ratio", fast.relative_performance_ci, exact.relative_performance_ci),
                ("baseline", fast.baseline.ci, exact.baseline.ci),
                ("candidate", fast.candidate.ci, exact.candidate.ci),
            ):
                if inner is None or outer is None:
                    continue  # no interval on one path: nothing to contain, nothing claimed
                intervals += 1
                # Up to floating point: the mean's moments summed per day round in the 15th digit.
                slack = 1e-9 * max(abs(inner[0]), abs(inner[1]))
                contains = outer[0] <= inner[0] + slack and inner[1] <= outer[1] + slack
                covered += contains
                if not contains:
                    misses.append(
                        f"interval {case} {name}: rollups [{outer[0]:.6g}, {outer[1]:.6g}], "
                        f"exact [{inner[0]:.6g}, {inner[1]:.6g}]"
                    )
    for line in misses:
        print(f"  {line}")
    print(
        f"sweep: {agree} of {total} verdicts agree or cannot tell; {covered} of {intervals} rollup "
        f"intervals contain the exact one  {load()}"
    )
    target("verdict-agreement", agree / total, "= 1.00", ratio=False)
    target("interval-coverage", covered / intervals if intervals else 0.0, "= 1.00", ratio=False)
    remove_observations(definition=definition)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--sweep-rows", type=int, default=200_000, help="rows a side of each sweep case")
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
    just_under = 2 * (settings.ROLLUP_THRESHOLD - 1_000)
    with connect() as watcher:
        for size, name, goal, repeat in (
            (just_under, "compare-exact-path", "≤ 1.5", args.repeat),
            (args.size, f"compare-rollup-{label_of(args.size)}", "≤ 0.05", 4 * args.repeat),
        ):
            fill_s, rebuild_s, rollup_rows = fill(size, definition, legacy, rebuilt, workload)
            answer = endpoint()
            api_cpu, api_wall = in_process_cpu(endpoint, repeat, watcher)
            raw_cpu, raw_wall = in_process_cpu(raw, args.repeat, watcher)
            print(
                f"{size:>11,} observations ({size // 2:,} a side; filled in {fill_s:.1f} s, rollups rebuilt in "
                f"{rebuild_s:.1f} s, {rollup_rows} day rows): endpoint {api_cpu * 1000:.1f} ms CPU "
                f"({api_wall * 1000:.1f} ms wall, {'rollups' if answer['approximate'] else 'exact'}), raw "
                f"percentile SQL {raw_cpu * 1000:.1f} ms CPU ({raw_wall * 1000:.1f} ms wall)  {load()}",
                flush=True,
            )
            if size == args.size:
                idle, peak, probe_approximate = worker_memory()
                print(
                    f"worker memory idle {idle / 1024:.0f} MiB, peak {peak / 1024:.0f} MiB ({peak / idle:.2f}×, "
                    f"{'rollups' if probe_approximate else 'exact'}) (target ≤ 2×)  {load()}"
                )
            target(name, api_cpu / raw_cpu, goal, digits=3)
    sweep(definition, workload, args.sweep_rows)


if __name__ == "__main__":
    main()
