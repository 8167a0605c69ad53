from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from freeze import services
from freeze.models import Component, FreezeWindow
from tests.program.factories import make_program, metrics_for_template


def freeze_setup(lead) -> dict:
    """A program, a window in force now (default approval), and components at each level."""
    metrics_for_template()
    program = make_program(lead)
    # The rising approval bar (on in the template) would make medium risk depend on how close today is
    # to a gate's due date; tests/freeze/test_approval_bar.py sets it where it is the subject.
    program.approval_bar_weeks = None
    program.save(update_fields=["approval_bar_weeks"])
    now = timezone.now()
    window = FreezeWindow.objects.create(
        program=program,
        name="Wave 2",
        starts_at=now - timedelta(days=1),
        ends_at=now + timedelta(days=10),
        default_level="approval",
    )
    components = {
        key: Component.objects.create(
            key=key, name=key, layer="training_framework", owner_team="training-platform"
        )
        for key in ("trainer", "kernels", "dashboards")
    }
    services.freeze_levels_set(actor=lead, window=window, levels={"kernels": "frozen", "dashboards": "open"})
    return {"program": program, "window": window, "now": now, **components}


def exception_payload(**changes) -> dict:
    now = timezone.now()
    payload = {
        "component": "trainer",
        "title": "Raise grad accumulation",
        "change": "max_grad_accum 64 -> 128",
        "justification": "The canary needs it.",
        "risk": "medium",
        "rollback_plan": "Set it back; 5 minutes.",
        "change_starts_at": (now + timedelta(hours=1)).isoformat(),
        "change_ends_at": (now + timedelta(hours=5)).isoformat(),
    }
    payload.update(changes)
    return payload


def draft_exception(engineer, component, now, **changes):
    """An exception filed through the services (a draft), its change window starting in an hour."""
    values = {
        "title": "t",
        "change": "c",
        "justification": "j",
        "risk": "low",
        "rollback_plan": "r",
        "change_starts_at": now + timedelta(hours=1),
        "change_ends_at": now + timedelta(hours=2),
    }
    values.update(changes)
    return services.exception_create(actor=engineer, component=component, **values)


def submitted_exception(engineer, component, now, **changes):
    """An exception filed and submitted through the services, its change window starting in an hour.
    Each affected metric is expected unchanged within 5 % unless the test says otherwise (submission
    needs an expectation per metric)."""
    changes.setdefault(
        "expected_impacts",
        [
            {"metric": k, "direction": "unchanged", "size_pct": 5}
            for k in changes.get("affected_metrics") or []
        ],
    )
    exception = draft_exception(engineer, component, now, **changes)
    return services.exception_submit(actor=engineer, exception=exception)
