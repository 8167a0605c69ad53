"""Demo incident history: months 1–11 of the demo program, legacy vs rebuilt. The rebuilt stack
starts with many slow-to-fix incidents (hangs, divergence, pipeline stalls) and gets faster month by
month; legacy stays steady. Everything goes through the services, so the mttr/mttd observations and
the derived weekly counts exist too."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta

from dateutil.relativedelta import relativedelta
from django.contrib.auth.models import User
from django.core.management.base import OutputWrapper
from django.utils import timezone

from freeze.models import Component
from incidents import services
from incidents.models import BugClass, Incident
from incidents.services import alerts
from incidents.services.derived import incident_rates_derive
from incidents.vocabulary import bug_classes_seed, incident_metrics_ensure
from metrics.models import System, Workload
from program import services as program_services
from program.models import Criterion

# The program demo starts 10 months and 12 days ago (program/demo.py); incidents follow its months.
PROGRAM_AGE = relativedelta(months=10, days=12)
COMPONENT_OF = {
    "communication-hang": "nccl",
    "numerical-divergence": "trainer-core",
    "data-pipeline": "dataloader",
    "hardware-fault": "gpu-firmware",
    "scheduler": "batch-scheduler",
    "checkpoint-restore": "checkpoint-store",
    "performance-regression": "kernels",
    "configuration": "trainer-core",
}
# Relative frequency of each class: the new stack's first months are hangs, divergence and stalls.
REBUILT_EARLY = {
    "communication-hang": 5,
    "numerical-divergence": 4,
    "data-pipeline": 3,
    "checkpoint-restore": 2,
    "performance-regression": 2,
    "configuration": 2,
    "hardware-fault": 1,
    "scheduler": 1,
}
STEADY = {
    "communication-hang": 1,
    "numerical-divergence": 1,
    "data-pipeline": 2,
    "checkpoint-restore": 1,
    "performance-regression": 2,
    "configuration": 2,
    "hardware-fault": 3,
    "scheduler": 2,
}
TITLES = {
    "communication-hang": "All-reduce hangs on {n} ranks after restart",
    "numerical-divergence": "Loss diverges to NaN at step {n}k",
    "data-pipeline": "Loader stalls on shard {n}",
    "hardware-fault": "Xid 79 on node gpu-{n}",
    "scheduler": "Jobs pending for hours in queue {n}",
    "checkpoint-restore": "Restore from step {n}k fails checksum",
    "performance-regression": "Step time up 12 % after build {n}",
    "configuration": "Wrong LR schedule in run config {n}",
}
SEVERITIES = (("sev1", 1), ("sev2", 3), ("sev3", 4), ("sev4", 2))


def _pick(rng: random.Random, weights: dict[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _plan(rng: random.Random, system: str, month: int) -> tuple[int, dict[str, int], float]:
    """How many incidents in this month, which classes, and the median hours to resolve."""
    if system == "legacy":
        return 3, STEADY, 9.0
    progress = month / 10  # 0 in month 1, 1 in month 11
    count = round(9 - 6 * progress)
    weights = REBUILT_EARLY if progress < 0.5 else STEADY
    return count, weights, 42.0 * math.exp(-2.2 * progress) + 4.0  # ~46 h early, ~8.5 h by month 11


def demo_load(*, users: dict[str, User], stdout: OutputWrapper) -> None:
    if Incident.objects.exists() or not Component.objects.filter(key="nccl").exists():
        return
    bug_classes_seed(BugClass)
    incident_metrics_ensure()
    rng = random.Random(15)
    engineer = users["engineer"]
    now = timezone.now().replace(second=0, microsecond=0)
    start = now - PROGRAM_AGE
    classes = {bug.key: bug for bug in BugClass.objects.all()}
    components = {c.key: c for c in Component.objects.filter(key__in=COMPONENT_OF.values())}
    workloads = [*Workload.objects.exclude(key="fleet").order_by("key"), None]
    for system in System.objects.filter(key__in=("legacy", "rebuilt")):
        for month in range(11):
            count, weights, median = _plan(rng, system.key, month)
            month_start = start + relativedelta(months=month)
            for _ in range(count):
                opened = month_start + timedelta(hours=rng.uniform(0, 29 * 24))
                if opened > now - timedelta(days=1):
                    continue
                key = _pick(rng, weights)
                hours = median * math.exp(rng.gauss(0, 0.45))
                detect = hours * rng.uniform(0.05, 0.25)
                resolved = opened + timedelta(hours=hours)
                still_open = resolved > now - timedelta(hours=2)
                bug = classes[key]
                services.incident_file(
                    actor=engineer,
                    title=TITLES[key].format(n=rng.randint(2, 96)),
                    system=system,
                    component=components[COMPONENT_OF[key]],
                    workload=rng.choice(workloads),
                    bug_class=bug,
                    severity=rng.choices([s for s, _ in SEVERITIES], weights=[w for _, w in SEVERITIES])[0],
                    opened_at=opened,
                    detected_at=opened + timedelta(hours=detect),
                    mitigated_at=None if still_open else opened + timedelta(hours=hours * 0.7),
                    resolved_at=None if still_open else resolved,
                    troubleshooting="Followed the runbook; root cause and fix linked."
                    if not still_open
                    else "",
                    done_steps=list(range(len(bug.runbook))) if not still_open else [0],
                    link=f"https://tracker.example.com/INC-{rng.randint(1000, 9999)}",
                )
    written = incident_rates_derive(days=(now - start).days + 7, now=now)
    _alert_routes(engineer, classes, components, now)
    _exclude_from_every_metric(users["lead"])
    stdout.write(
        f"Loaded {Incident.objects.count()} demo incidents; {written} derived incident metric values."
    )


# Alertmanager routes for the two alerts the demo stack is known for; one alert no route matches yet
# shows on the routes page as unrouted.
ALERT_ROUTES = (
    (
        {"alertname": "NcclAllReduceHang", "cluster": "rebuilt"},
        "rebuilt",
        "nccl",
        "communication-hang",
        "sev2",
    ),
    ({"alertname": "DataLoaderStalled"}, "rebuilt", "dataloader", "data-pipeline", "sev3"),
)


def _alert_routes(
    engineer: User, classes: dict[str, BugClass], components: dict[str, Component], now: datetime
) -> None:
    systems = {s.key: s for s in System.objects.filter(key__in=("legacy", "rebuilt"))}
    for matchers, system, component, bug_class, severity in ALERT_ROUTES:
        if component not in components:
            continue
        alerts.alert_route_create(
            actor=engineer,
            matchers=matchers,
            system=systems[system],
            component=components[component],
            bug_class=classes[bug_class],
            severity=severity,
        )
    unrouted = alerts.Alert(
        status=alerts.FIRING,
        fingerprint="5e1d0c0ffee0a1b2",
        starts_at=now - timedelta(minutes=40),
        labels={"alertname": "GpuXidErrors", "cluster": "rebuilt", "node": "gpu-17", "xid": "79"},
        annotations={"summary": "Xid 79 on gpu-17"},
    )
    alerts.alert_receive(actor=engineer, receiver="rebuild-tracker", alerts=[unrouted], now=now)


# The incident-derived metrics have data on both systems, so "every tracked metric" would take them in.
# A young stack is expected to have more, slower-to-fix bugs at cutover: the demo lead reviews them month
# by month on the MTTR table instead of gating the cutover on them, and says so on the gate.
BUG_FIX_REASON = "Bug-fix speed of the young stack is reviewed monthly on the incidents page's MTTR table."
PACE_REASON = "Program pace (rounds a team runs per day), not a property of either stack."
EXCLUDED_INCIDENT_METRICS = [
    *((key, BUG_FIX_REASON) for key in ("incidents-per-week", "mttd", "mttr", "recurrence-rate")),
    *((key, PACE_REASON) for key in ("effective-rounds-per-day", "program-rounds-per-day")),
]


def _exclude_from_every_metric(lead: User) -> None:
    criterion = Criterion.objects.select_related("gate").get(
        gate__phase__program__slug="frontier-rebuild", kind=Criterion.Kind.EVERY_METRIC
    )
    program_services.criterion_edit(
        actor=lead,
        criterion=criterion,
        excluded_metrics=[
            *criterion.excluded_metrics,
            *({"metric": key, "reason": reason} for key, reason in EXCLUDED_INCIDENT_METRICS),
        ],
    )
    program_services.gate_evaluate(gate=criterion.gate)
