from __future__ import annotations

from datetime import date, timedelta

from django.utils import timezone

from metrics.models import MetricDefinition, Observation, System, Workload
from program import services
from program.models import Gate, Program
from tests.metrics.factories import definition


def metrics_for_template() -> dict:
    """What rebuild-14m's suggested criteria need: systems, two workloads, three active metrics."""
    return {
        "legacy": System.objects.create(key="legacy", name="Legacy"),
        "rebuilt": System.objects.create(key="rebuilt", name="Rebuilt"),
        "large": Workload.objects.create(
            key="llm-pretrain-70b", name="70B", size="large", criticality="core"
        ),
        "medium": Workload.objects.create(
            key="llm-finetune-8b", name="8B", size="medium", criticality="peripheral"
        ),
        "small": Workload.objects.create(
            key="vision-small", name="Vision", size="small", criticality="peripheral"
        ),
        "throughput": definition(
            key="training-throughput", unit="token/s", direction="higher_is_better", statistic="mean"
        ),
        "step": definition(key="step-time", unit="ms", direction="lower_is_better", statistic="p50"),
        "scaling": definition(
            key="scaling-efficiency", unit="dimensionless", direction="higher_is_better", statistic="mean"
        ),
    }


def make_lead(program: Program, *users) -> None:
    """Make `users` leads of `program` too (its creator leads it already), through the service."""
    from program.services.memberships import membership_grant

    for user in users:
        membership_grant(actor=program.lead, program=program, user=user, role="lead")


def make_program(lead, *, slug: str = "rebuild", start: date | None = None) -> Program:
    return services.program_create(
        actor=lead,
        slug=slug,
        name="Rebuild",
        start_date=start or date(2026, 1, 1),
        baseline=System.objects.get(key="legacy"),
        candidate=System.objects.get(key="rebuilt"),
    )


def observe(
    metric: MetricDefinition, system: System, workload: Workload, values: list[float], *, tag: str = ""
) -> None:
    start = timezone.now() - timedelta(days=2)
    Observation.objects.bulk_create(
        Observation(
            definition=metric,
            system=system,
            workload=workload,
            value=value,
            unit=metric.unit,
            observed_at=start + timedelta(seconds=i),
            run_id=f"{tag}{system.key}-{i}",
        )
        for i, value in enumerate(values)
    )


def spread(center: float, n: int = 60) -> list[float]:
    return [center * (1 + ((i * 37) % 21 - 10) / 200) for i in range(n)]


def canary_gate() -> Gate:
    """The canary phase's exit gate: the one the template fills with criteria."""
    return Gate.objects.get(phase__kind="canary", kind="exit")


def program_with_canary_rows(lead) -> dict:
    """The template's metrics and a program over them, with 60 rows a side of throughput (100 → 90) and
    step time (800 → 700) on the medium workload, rollups rebuilt: with ROLLUP_THRESHOLD under 60 the
    canary criteria read the day rollups."""
    from metrics.rollups.maintain import rollups_rebuild

    ref = metrics_for_template()
    ref["program"] = make_program(lead)
    for metric, legacy, rebuilt in (("throughput", 100, 90), ("step", 800, 700)):
        observe(ref[metric], ref["legacy"], ref["medium"], spread(legacy))
        observe(ref[metric], ref["rebuilt"], ref["medium"], spread(rebuilt))
    rollups_rebuild()
    return ref
