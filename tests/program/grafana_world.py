"""Demo-like rows for the Prometheus-style query API and the Grafana dashboard's tests: the rebuild-14m
template's systems and metrics, a public program and a private one, and every template metric observed
on both systems, two workloads, every 30 minutes over the last five days."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from metrics.models import MetricDefinition, Observation
from program import services
from program.models import Program
from tests.conftest import api_token, make_user
from tests.program.factories import make_program, metrics_for_template

DAYS = 5
EVERY = timedelta(minutes=30)
# The centre of each metric per system; values spread ±10 % around it, deterministically.
CENTRES = {
    "step-time": {"legacy": 420.0, "rebuilt": 360.0},
    "training-throughput": {"legacy": 9000.0, "rebuilt": 10500.0},
    "scaling-efficiency": {"legacy": 0.82, "rebuilt": 0.9},
}


@dataclass
class World:
    now: datetime  # the last whole hour; rows stop 30 minutes before it
    ref: dict
    program: Program
    secret: Program
    lead: User
    viewer: User
    viewer_token: str

    @property
    def step_time(self) -> MetricDefinition:
        return self.ref["step"]


def build_world() -> World:
    lead = make_user("lead", "program-leads")
    viewer = make_user("viewer")
    ref = metrics_for_template()
    program = make_program(lead)
    secret = services.program_create(
        actor=lead,
        slug="secret",
        name="Secret",
        start_date=program.start_date,
        baseline=ref["legacy"],
        candidate=ref["rebuilt"],
        is_private=True,
    )
    now = timezone.now().replace(minute=0, second=0, microsecond=0)
    rows = []
    for key, centres in CENTRES.items():
        metric = MetricDefinition.objects.get(key=key, status="active")
        for system_key, centre in centres.items():
            for workload in (ref["large"], ref["medium"]):
                for k in range(1, DAYS * 48 + 1):
                    rows.append(
                        Observation(
                            definition=metric,
                            system=ref[system_key],
                            workload=workload,
                            value=centre * (1 + ((k * 37 + workload.pk) % 21 - 10) / 100),
                            unit=metric.unit,
                            observed_at=now - k * EVERY,
                            run_id=f"{system_key}-{workload.key}-{k}",
                        )
                    )
    Observation.objects.bulk_create(rows)
    return World(now, ref, program, secret, lead, viewer, api_token(viewer, "read"))
