"""Demo freeze list: a window in force now (cutover stabilisation), the upcoming frontier window,
components at every level, exceptions in every state — all through the services."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib.auth.models import User
from django.core.management.base import OutputWrapper
from django.utils import timezone

from freeze import services
from freeze.models import Component, FreezeException, FreezeWindow
from program.models import Gate, Program

COMPONENTS = [
    ("gpu-firmware", "GPU firmware and drivers", "hardware", "infra-hardware"),
    ("ib-fabric", "InfiniBand fabric config", "network", "infra-hardware"),
    ("nccl", "NCCL collectives", "communication", "training-platform"),
    ("trainer-core", "Trainer core (parallelism, optimizer)", "training_framework", "training-platform"),
    ("kernels", "Fused attention kernels", "training_framework", "training-platform"),
    ("dataloader", "Streaming data loader", "data_pipeline", "data-platform"),
    ("tokenizer-service", "Tokenizer service", "data_pipeline", "data-platform"),
    ("checkpoint-store", "Checkpoint object store", "storage", "data-platform"),
    ("serving-router", "Inference router", "inference", "inference-platform"),
    ("batch-scheduler", "Cluster batch scheduler", "scheduler", "infra-hardware"),
    ("metrics-agent", "Metrics agent and dashboards", "observability", "infra-hardware"),
    ("ci-tooling", "CI and release tooling", "tooling", "training-platform"),
]
CUTOVER_LEVELS = {
    "gpu-firmware": "frozen",
    "nccl": "frozen",
    "trainer-core": "approval",
    "kernels": "approval",
    "checkpoint-store": "approval",
    "metrics-agent": "open",
    "ci-tooling": "open",
    "tokenizer-service": "open",
}
# The fabric team's weekend freeze: no fabric or firmware changes while nobody is on site.
WEEKEND_LEVELS = {"ib-fabric": "frozen", "gpu-firmware": "frozen", "batch-scheduler": "approval"}
FABRIC_TZ = ZoneInfo("Europe/Berlin")
FRONTIER_LEVELS = {
    "trainer-core": "frozen",
    "kernels": "frozen",
    "nccl": "frozen",
    "gpu-firmware": "frozen",
    "metrics-agent": "open",
    "ci-tooling": "open",
}


def demo_load(*, users: dict[str, User], stdout: OutputWrapper) -> None:
    program = Program.objects.filter(slug="frontier-rebuild").first()
    if program is None or FreezeWindow.objects.filter(program=program, phase__isnull=True).exists():
        return
    lead, lead2, engineer, owner = users["lead"], users["lead2"], users["engineer"], users["owner"]
    for key, name, layer, team in COMPONENTS:
        services.component_upsert(actor=lead, key=key, name=name, layer=layer, owner_team=team)
    now = timezone.now().replace(second=0, microsecond=0)
    cutover = services.window_create(
        actor=lead,
        program=program,
        name="Cutover wave 2 stabilisation",
        starts_at=now - timedelta(days=5),
        ends_at=now + timedelta(days=20),
    )
    services.freeze_levels_set(actor=lead, window=cutover, levels=CUTOVER_LEVELS, reason="wave 2 goes live")
    frontier = FreezeWindow.objects.filter(program=program, phase__kind="frontier").first()
    if frontier is None:
        frontier = services.window_for_frontier(program_id=program.pk)
    assert frontier is not None, "the demo program has a frontier phase"
    services.freeze_levels_set(actor=lead, window=frontier, levels=FRONTIER_LEVELS, reason="framework freeze")
    # A second window in force now: the freeze list shows both as columns, the strictest level deciding.
    storage = services.window_create(
        actor=lead2,
        program=program,
        name="Checkpoint store migration",
        starts_at=now - timedelta(days=2),
        ends_at=now + timedelta(days=6),
        default_level="open",
    )
    services.freeze_levels_set(
        actor=lead2,
        window=storage,
        levels={"checkpoint-store": "frozen", "dataloader": "approval"},
        reason="object store moves to the new cluster",
    )

    def file(
        component: str, title: str, risk: str, starts: datetime, hours: int, **text: Any
    ) -> FreezeException:
        return services.exception_create(
            actor=engineer,
            component=Component.objects.get(key=component),
            window=cutover,
            title=title,
            risk=risk,
            change_starts_at=starts,
            change_ends_at=starts + timedelta(hours=hours),
            change=text.get("change", title),
            justification=text.get("why", "Blocks the wave 2 migration."),
            rollback_plan=text.get("rollback", "Redeploy the previous release; 15 minutes."),
            affected_metrics=text.get("affects"),
            expected_impacts=text.get("expects"),
        )

    file("kernels", "Try a faster softmax kernel", "low", now + timedelta(days=3), 6)  # stays a draft

    waiting = file(
        "trainer-core",
        "Raise gradient-accumulation limit",
        "medium",
        now + timedelta(days=2),
        12,
        change="max_grad_accum 64 → 128 in trainer config.",
        why="The 70B canary needs it to keep global batch size on fewer nodes.",
    )
    services.exception_submit(actor=engineer, exception=waiting)

    live = file(
        "checkpoint-store",
        "Enable parallel shard upload",
        "high",
        now - timedelta(hours=2),
        48,
        change="checkpoint.upload_concurrency 4 → 16.",
        why="Checkpoint saves are 9% slower than legacy.",
        rollback="Set upload_concurrency back to 4; no restart needed.",
        affects=["training-throughput"],  # checkpoint stalls show in throughput: its gates list it
        expects=[{"metric": "training-throughput", "direction": "better", "size_pct": 2}],
    )
    services.exception_submit(actor=engineer, exception=live)
    services.exception_approve(actor=lead2, exception=live, comment="Tested on the canary cluster.")
    services.exception_approve(actor=lead, exception=live, comment="Go.")

    rejected = file("kernels", "Swap attention kernel mid-wave", "high", now + timedelta(days=1), 8)
    services.exception_submit(actor=engineer, exception=rejected)
    services.exception_reject(actor=owner, exception=rejected, reason="Not during the wave; after cutover.")

    withdrawn = file(
        "trainer-core", "Refactor optimizer state sharding", "medium", now + timedelta(days=4), 24
    )
    services.exception_submit(actor=engineer, exception=withdrawn)
    services.exception_withdraw(actor=engineer, exception=withdrawn, reason="Not needed after all.")

    # Ended and carried out: its page and the gates on step-time look back at what it did.
    old = file(
        "trainer-core",
        "Hotfix NaN guard in loss scaling",
        "low",
        now + timedelta(hours=1),
        24,
        affects=["step-time"],
        expects=[{"metric": "step-time", "direction": "unchanged", "size_pct": 2}],
    )
    services.exception_submit(actor=engineer, exception=old)
    services.exception_approve(actor=owner, exception=old, comment="Small and safe.")
    # Demo only: the services refuse a window that has ended; move this one's back four days.
    FreezeException.objects.filter(pk=old.pk).update(
        change_starts_at=now - timedelta(days=4), change_ends_at=now - timedelta(days=3)
    )
    services.exceptions_expire()

    revoked = file(
        "trainer-core", "Switch checkpoint format to sharded safetensors", "low", now + timedelta(hours=6), 24
    )
    services.exception_submit(actor=engineer, exception=revoked)
    services.exception_approve(actor=owner, exception=revoked)
    services.exception_revoke(actor=lead, exception=revoked, reason="Restore tests failed on the new format.")

    _under_the_approval_bar(frontier, engineer, users["metrics"])
    _weekend_and_override(program, lead, now)

    states = sorted(set(FreezeException.objects.values_list("status", flat=True)))
    stdout.write(f"Loaded the freeze list: {len(COMPONENTS)} components, exceptions {', '.join(states)}.")


def _under_the_approval_bar(frontier: FreezeWindow, engineer: User, team_member: User) -> None:
    """A medium-risk change nine days before the frontier exit gate is due: the program's rising
    approval bar (rebuild-14m sets two weeks) makes it need a second approval, a program lead's. Its
    owner team (data-platform) has approved; it waits for a lead, so the exception page shows the rule
    the submission fixed and who is still needed."""
    assert frontier.phase is not None, "the frontier window belongs to the frontier phase"
    gate = Gate.objects.get(phase=frontier.phase, kind=Gate.Kind.EXIT)
    starts = timezone.make_aware(datetime.combine(gate.due_date - timedelta(days=9), time(9)))
    exception = services.exception_create(
        actor=engineer,
        component=Component.objects.get(key="dataloader"),
        window=frontier,
        title="Deeper data-loader prefetch for the final run",
        risk="medium",
        change_starts_at=starts,
        change_ends_at=starts + timedelta(hours=4),
        change="loader.prefetch_batches 4 → 8 on the frontier cluster.",
        justification="The 70B run waits on data 3% more than on legacy; deeper prefetch hides it.",
        rollback_plan="Set prefetch_batches back to 4; it applies at the next job restart.",
        affected_metrics=["data-loader-wait-share"],
        expected_impacts=[{"metric": "data-loader-wait-share", "direction": "better", "size_pct": 3}],
    )
    # Through the service: it fixes required_approvals, requires_lead_approval and approval_rule.
    services.exception_submit(actor=engineer, exception=exception)
    services.exception_approve(
        actor=team_member, exception=exception, comment="Eight batches fit the loader's memory budget."
    )


def _weekend_and_override(program: Program, lead: User, now: datetime) -> None:
    """A recurring weekend freeze (Friday 18:00 – Monday 08:00 Berlin time, every week for half a
    year; open by default, so it freezes only fabric and firmware) and a break-glass override on the
    kernels, opened by one lead and awaiting the other's review."""
    local = (now - timedelta(days=4)).astimezone(FABRIC_TZ)
    friday = local.date() + timedelta(days=(4 - local.weekday()) % 7)
    starts_at = datetime.combine(friday, time(18), tzinfo=FABRIC_TZ)
    weekend = services.window_create(
        actor=lead,
        program=program,
        name="Fabric weekend freeze",
        starts_at=starts_at,
        ends_at=starts_at + timedelta(weeks=26),
        default_level="open",
        rrule="FREQ=WEEKLY;BYDAY=FR",
        timezone="Europe/Berlin",
        occurrence_duration=timedelta(days=2, hours=14),
    )
    services.freeze_levels_set(actor=lead, window=weekend, levels=WEEKEND_LEVELS, reason="nobody on site")
    services.override_open(
        actor=lead,
        component=Component.objects.get(key="kernels"),
        reason="Fused attention returns NaNs on the new driver; shipping the kernel flag fix now.",
        ends_at=now + timedelta(hours=6),
    )
