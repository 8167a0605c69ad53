"""What the incident log brings: the bug classes with their runbooks (seeded by the data migration,
and again by the demo: a test database's flush empties the migration's rows), and, on first use, the
registry's incident metrics and the `fleet` workload incidents without a workload are filed under.

The metrics are registered on first use rather than by migration, so a database without incidents
(every other app's tests) has a registry without them. They go through the registry's
definition_ensure_registered (metrics/services/ensure.py): active at once, owned by the framework
engineers — the metric-owner workflow of draft → active is for people, and these meanings are fixed
here in code — with the registry's checks and its audit rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from incidents.models import BugClass as BugClassModel

BUG_CLASSES = [
    (
        "communication-hang",
        "Communication hang",
        [
            "Capture stack traces of every rank (py-spy dump) before restarting",
            "Find the first rank that stopped making progress in the collective logs",
            "Check NIC / fabric error counters on the hosts of the stuck ranks",
            "Re-run with collective debug logging on the smallest reproducing scale",
            "Add a watchdog timeout or fix, and a regression test",
        ],
    ),
    (
        "numerical-divergence",
        "Numerical divergence",
        [
            "Find the first step where loss or grad-norm left the reference band",
            "Diff the config and library versions against the last good run",
            "Re-run from the last good checkpoint with anomaly detection on",
            "Bisect precision settings (bf16/fp32 accumulators, loss scaling)",
            "Compare per-layer activations with the old system on the same batch",
        ],
    ),
    (
        "data-pipeline",
        "Data pipeline",
        [
            "Check loader throughput and queue depth on the stalled workers",
            "Verify the shard manifest and object-store reachability",
            "Re-read the failing shard alone to rule out corrupt records",
            "Confirm resumption picks up the right sample offset",
        ],
    ),
    (
        "hardware-fault",
        "Hardware fault",
        [
            "Drain the node and collect ECC / Xid / link errors",
            "Run the burn-in diagnostic on the suspect device",
            "File the RMA and exclude the node in the scheduler",
            "Restart the job from the last checkpoint on healthy nodes",
        ],
    ),
    (
        "scheduler",
        "Scheduler",
        [
            "Check the job's pending reason and the queue's fair-share state",
            "Look for stuck allocations or orphaned reservations",
            "Compare the submission spec with the last accepted job",
            "Fix the policy or spec and resubmit",
        ],
    ),
    (
        "checkpoint-restore",
        "Checkpoint/restore",
        [
            "Verify the checkpoint's manifest and every shard's checksum",
            "Restore on the smallest topology that loads it",
            "Compare restored optimizer state and step counter with the saved ones",
            "Check storage quotas and write latency during the save",
        ],
    ),
    (
        "performance-regression",
        "Performance regression",
        [
            "Confirm the regression against the step-time baseline on two runs",
            "Bisect commits between the last good and first bad build",
            "Profile one step and diff kernel times against the baseline",
            "Land the fix and confirm step time is back within the band",
        ],
    ),
    (
        "configuration",
        "Configuration",
        [
            "Diff the effective config against the last good run",
            "Find who changed the setting and why",
            "Add validation so the bad value is refused at submission",
        ],
    ),
]

METRICS = [
    {
        "key": "mttr",
        "name": "Mean time to resolve",
        "unit": "hour",
        "direction": "lower_is_better",
        "statistic": "p50",
        "sampling": "per_run",
        "start_event": "incident opened (the failure began)",
        "end_event": "incident resolved (the fix landed)",
        "description": "Hours from an incident's start to its fix; one value per resolved incident "
        "(run_id incident-<id>), tagged with bug_class and severity. Written by the incident log.",
    },
    {
        "key": "mttd",
        "name": "Mean time to detect",
        "unit": "hour",
        "direction": "lower_is_better",
        "statistic": "p50",
        "sampling": "per_run",
        "start_event": "incident opened (the failure began)",
        "end_event": "incident detected",
        "description": "Hours from an incident's start to its detection; one value per resolved incident.",
    },
    {
        "key": "incidents-per-week",
        "name": "Incidents per week",
        "unit": "count",
        "direction": "lower_is_better",
        "statistic": "mean",
        "sampling": "per_interval",
        "start_event": "Monday 00:00 UTC of the ISO week",
        "end_event": "Sunday 24:00 UTC of the ISO week",
        "description": "Incidents opened on a system in one ISO week (derived daily by the incident log).",
    },
    {
        "key": "effective-rounds-per-day",
        "name": "Effective experiment rounds per day",
        "unit": "count",
        "direction": "higher_is_better",
        "statistic": "mean",
        "sampling": "per_interval",
        "start_event": "a run's first step-time observation",
        "end_event": "the run's last step-time observation",
        "description": "Runs (step-time observations grouped by run_id) that ended on that UTC day and whose "
        "span overlaps no incident on the system (derived daily by the incident log).",
    },
    {
        "key": "program-rounds-per-day",
        "name": "Effective experiment rounds per day, per program",
        "unit": "count",
        "direction": "higher_is_better",
        "statistic": "mean",
        "sampling": "per_interval",
        "start_event": "a run's first observation of the program's rounds metric",
        "end_event": "the run's last observation of the program's rounds metric",
        "description": "Per program (tag `program`) and system: the runs of the metric the program's "
        "template rounds slot is bound to that ended on that UTC day and overlap no incident on the "
        "system (derived daily by the incident log).",
    },
    {
        "key": "recurrence-rate",
        "name": "Recurrence rate (the same pitfall again)",
        "unit": "dimensionless",
        "direction": "lower_is_better",
        "statistic": "mean",
        "sampling": "per_interval",
        "start_event": "the first day 00:00 UTC of the month",
        "end_event": "the month's last day 24:00 UTC",
        "description": "Per system, bug class (tag bug_class) and month: the share (0–1) of the month's "
        "incidents of the class that recur an earlier incident of the same root cause (derived daily by "
        "the incident log).",
    },
]


def bug_classes_seed(BugClass: type[BugClassModel]) -> None:
    """Create the missing classes; takes the model so the data migration can pass its historical one
    (typed as the model it copies)."""
    for key, name, runbook in BUG_CLASSES:
        BugClass.objects.get_or_create(key=key, defaults={"name": name, "runbook": runbook})


def incident_metrics_ensure() -> None:
    """Register the incident metrics and the fleet workload where missing (first use): each metric
    through the registry's service (metrics.services.ensure), checked and audited like any other."""
    from metrics.models import MetricDefinition, Workload
    from metrics.public import definition_ensure_registered

    if MetricDefinition.objects.filter(key__in=[spec["key"] for spec in METRICS]).count() == len(METRICS):
        return
    Workload.objects.get_or_create(
        key="fleet",
        defaults={
            "name": "Fleet-wide (incidents without one workload)",
            "size": "large",
            "criticality": "core",
        },
    )
    for spec in METRICS:
        definition_ensure_registered(
            data={**spec, "owner_team": "framework-engineers", "min_value": 0.0},
            reason="Registered by the incident log on first use.",
        )
