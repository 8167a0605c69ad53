from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from freeze.models import Component
from incidents import services
from incidents.models import BugClass
from metrics.models import System, Workload


def incidents_setup() -> dict:
    """Two systems, a component, a workload; the bug classes and metrics come from the migrations."""
    return {
        "legacy": System.objects.get_or_create(key="legacy", defaults={"name": "Legacy"})[0],
        "rebuilt": System.objects.get_or_create(key="rebuilt", defaults={"name": "Rebuilt"})[0],
        "nccl": Component.objects.create(
            key="nccl", name="NCCL", layer="communication", owner_team="training-platform"
        ),
        "workload": Workload.objects.create(key="llm-70b", name="70B", size="large", criticality="core"),
        "hang": BugClass.objects.get(key="communication-hang"),
        "divergence": BugClass.objects.get(key="numerical-divergence"),
    }


def file_incident(user, refs: dict, *, system: str = "rebuilt", opened: datetime | None = None, **changes):
    opened = opened or timezone.now() - timedelta(days=3)
    values = {
        "title": "All-reduce hangs at step 4k",
        "system": refs[system],
        "component": refs["nccl"],
        "bug_class": refs["hang"],
        "severity": "sev2",
        "opened_at": opened,
        "detected_at": opened + timedelta(hours=1),
    }
    values.update(changes)
    return services.incident_file(actor=user, **values)
