"""Shadow results: how each measured criterion would be judged under a newer version of its metric.

During a metric-version transition, observations arrive for a draft (or newly active) version while
the gate's criteria still pin the old one. The gate page shows "under v2: pass (1.12)" beside the
pinned result, judged exactly as the evaluation judges (program.evaluation.criterion_judge), but
never stored: the gate's decision stays on the pinned version until a lead re-pins.

Two queries whatever the number of criteria: the keys' versions (program.versions.current_versions,
read by the caller) and every shadow comparison's samples at once (sides_fetch_many)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from metrics.models import MetricDefinition
from metrics.public import SidesRequest, sides_fetch_many
from program.evaluation import criterion_judge, criterion_window_start
from program.models import Criterion, Program


@dataclass(frozen=True)
class Shadow:
    definition: MetricDefinition
    outcome: str
    value: float | None
    reason: str


def _newer_with_data(criterion: Criterion, versions: list[MetricDefinition]) -> list[MetricDefinition]:
    if criterion.kind == Criterion.Kind.MANUAL or criterion.metric is None:
        return []
    pinned = criterion.metric
    return [
        v
        for v in versions
        if v.key == pinned.key and v.version > pinned.version and getattr(v, "has_observations", True)
    ]


def criteria_shadows(
    program: Program,
    criteria: list[Criterion],
    versions: list[MetricDefinition],
    *,
    now: datetime | None = None,
) -> dict[int, list[Shadow]]:
    """criterion id → its shadows, oldest newer version first; criteria without any are left out.
    `versions` are the draft and active versions of the criteria's keys (current_versions)."""
    now = now or timezone.now()
    wanted = [(c, v) for c in criteria for v in _newer_with_data(c, versions)]
    sides = sides_fetch_many(
        [
            SidesRequest(
                definition_id=v.pk,
                workload_id=c.workload_id,
                since=criterion_window_start(c, now),
                tag_filters=c.tag_filters or None,
                group_by=c.group_by or None,
            )
            for c, v in wanted
        ],
        baseline=program.baseline_system,
        candidate=program.candidate_system,
    )
    shadows: dict[int, list[Shadow]] = {}
    for (criterion, version), pair in zip(wanted, sides, strict=True):
        judgement = criterion_judge(
            criterion,
            baseline=program.baseline_system,
            candidate=program.candidate_system,
            definition=version,
            sides=pair,
            now=now,
        )
        shadows.setdefault(criterion.pk, []).append(
            Shadow(version, judgement.outcome, judgement.value, judgement.reason)
        )
    return shadows
