from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from metrics.models import MetricDefinition, System, Workload


def reference_data() -> dict:
    """legacy/rebuilt systems, two workloads and an active latency definition in seconds."""
    legacy = System.objects.create(key="legacy", name="Legacy")
    rebuilt = System.objects.create(key="rebuilt", name="Rebuilt")
    medium = Workload.objects.create(
        key="finetune", name="Fine-tune", size="medium", criticality="peripheral"
    )
    large = Workload.objects.create(key="pretrain", name="Pretrain", size="large", criticality="core")
    latency = definition(key="latency", unit="s", direction="lower_is_better")
    return {"legacy": legacy, "rebuilt": rebuilt, "medium": medium, "large": large, "latency": latency}


def definition(*, key: str, status: str = "active", version: int = 1, **fields) -> MetricDefinition:
    values = {
        "name": key.title(),
        "unit": "s",
        "direction": "lower_is_better",
        "statistic": "p50",
        "sampling": "per_request",
        "start_event": f"{key} starts",
        "end_event": f"{key} ends",
        "owner_team": "data-platform",
    }
    values.update(fields)
    return MetricDefinition.objects.create(key=key, version=version, status=status, **values)


def definition_body(**changes) -> dict:
    """The API body registering a definition `probe` (POST /api/v1/definitions/)."""
    body = {
        "key": "probe",
        "name": "Probe",
        "unit": "ms",
        "direction": "lower_is_better",
        "sampling": "per_request",
        "start_event": "a",
        "end_event": "b",
        "owner_team": "data-platform",
    }
    body.update(changes)
    return body


def row(index: int = 0, **overrides) -> dict:
    base = {
        "metric": "latency",
        "system": "rebuilt",
        "workload": "finetune",
        "value": 0.25,
        "unit": "s",
        "observed_at": (timezone.now() - timedelta(minutes=10, seconds=index)).isoformat(),
        "run_id": f"run-{index}",
    }
    base.update(overrides)
    return base
