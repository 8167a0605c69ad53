"""Evaluating every gate of the demo program over ~10,000,000 observations (target: under 1 s).

    DATABASE_URL=... .venv/bin/python benchmarks/gates.py [--observations 10000000]

Loads the demo if needed, multiplies its observations (same metrics, workloads and spread) up to the
requested size, rebuilds the day rollups (timed: a bulk load bypasses ingest, which would maintain
them), then measures gate_evaluate for every gate of the demo program by CPU time (this process and its
PostgreSQL backends; the wall time beside), twice: the first run stores new
evaluations, the second finds identical inputs and reuses them. Criteria with more than
ROLLUP_THRESHOLD rows a side are judged from the rollups (their evidence says approximate).
"""

from __future__ import annotations

import argparse
import io
import time

from _measure import backends, connect, cpu_seconds, cpu_since, load, target
from _setup import remove_observations
from django.core.management import call_command
from django.db import connection

from metrics.models import Observation
from metrics.rollups.maintain import rollups_rebuild
from program.demo import SLUG
from program.models import Criterion, CriterionResult, Gate, Phase
from program.services import gate_evaluate

MULTIPLY_SQL = """
INSERT INTO metrics_observation (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)
SELECT definition_id, system_id, workload_id, value * (0.97 + random() * 0.06), unit,
       observed_at - k * interval '1 second', run_id || '-x' || k, 'bench-gates', tags
FROM metrics_observation, generate_series(1, %s) AS k
WHERE source = 'demo'
"""


MEASURED = [k for k in Criterion.Kind.values if k != Criterion.Kind.MANUAL]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--observations", type=int, default=10_000_000)
    args = parser.parse_args()

    call_command("load_demo", stdout=io.StringIO())
    remove_observations(source="bench-gates")
    demo_rows = Observation.objects.filter(source="demo").count()
    copies = max(0, args.observations // demo_rows - 1)
    with connection.cursor() as cursor:
        cursor.execute(MULTIPLY_SQL, [copies])
        cursor.execute("VACUUM ANALYZE metrics_observation")  # as autovacuum would after a bulk load
    started = time.perf_counter()
    rollup_rows = rollups_rebuild()
    print(f"rollups rebuilt in {time.perf_counter() - started:.1f} s ({rollup_rows} day rows)")
    total = Observation.objects.count()
    # Every gate that may be evaluated: a completed phase's gates are history (program.services.gates).
    gates = list(
        Gate.objects.filter(phase__program__slug=SLUG)
        .exclude(phase__status=Phase.Status.COMPLETED)
        .select_related("phase__program__baseline_system", "phase__program__candidate_system")
    )
    criteria = sum(gate.criteria.count() for gate in gates)
    watcher = connect()
    for label in ("first evaluation (stores results)", "second evaluation (same data, reused)"):
        # CPU of this process and of its PostgreSQL backends: on a shared machine the wall time follows
        # whatever else runs, the CPU the evaluation needs does not.
        db_before, process_before = cpu_seconds(backends(watcher)), time.process_time()
        started = time.perf_counter()
        for gate in gates:
            gate_evaluate(gate=gate)
        wall = time.perf_counter() - started
        cpu = time.process_time() - process_before + cpu_since(db_before, cpu_seconds(backends(watcher)))
        results = CriterionResult.objects.filter(evaluation__gate__in=gates, criterion__kind__in=MEASURED)
        approximate = results.filter(evidence__approximate=True).values("criterion").distinct().count()
        print(f"  criteria judged from rollups: {approximate}")
        print(
            f"{label}: {len(gates)} gates, {criteria} criteria, {total:,} observations: {cpu:.3f} s CPU "
            f"({wall:.3f} s wall)  {load()}"
        )
        if label.startswith("first"):
            target(
                "gates-evaluation-s",
                cpu,
                "< 1",
                ratio=False,
                digits=3,
                note="first evaluation, CPU time (process + PostgreSQL)",
            )
    watcher.close()
    remove_observations(source="bench-gates")
    rollups_rebuild()


if __name__ == "__main__":
    main()
