"""Correcting a phase's actual dates after the fact (a lead backfills what really happened)."""

from __future__ import annotations

from datetime import date

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.transitions import require_state
from program import policies, signals
from program.models import Phase


class Unset:
    """The type of UNSET: a date not given keeps its value (None clears an active phase's end)."""


UNSET = Unset()


def _bad(field: str, message: str) -> ApplicationError:
    return ApplicationError(message, status=400, field=field)


def _check_dates(phase: Phase, start: date | None, end: date | None, neighbours: list[Phase]) -> None:
    """Start ≤ end, nothing in the future, and in step with the phases before and after it."""
    today = timezone.localdate()
    if start is None:
        raise _bad("actual_start", f"{phase.name} has started: actual_start is needed.")
    if phase.status == Phase.Status.COMPLETED and end is None:
        raise _bad("actual_end", f"{phase.name} is completed: actual_end is needed.")
    if phase.status == Phase.Status.ACTIVE and end is not None:
        raise _bad("actual_end", f"{phase.name} is still active: it has no actual_end yet.")
    for field, value in (("actual_start", start), ("actual_end", end)):
        if value is not None and value > today:
            raise _bad(field, f"{field} must not be in the future (today is {today.isoformat()}).")
    if start < phase.program.start_date:
        raise _bad(
            "actual_start",
            f"actual_start must not be before the program starts ({phase.program.start_date}).",
        )
    if end is not None and end < start:
        raise _bad("actual_end", "actual_end must not be before actual_start.")
    before = [p for p in neighbours if p.order < phase.order]
    after = [p for p in neighbours if p.order > phase.order]
    previous = before[-1] if before else None
    following = after[0] if after else None
    # Advancing ends one phase and starts the next on the same day, so equal dates are in order.
    if previous is not None and previous.actual_end and start < previous.actual_end:
        raise _bad(
            "actual_start",
            f"actual_start must not be before {previous.name} ended ({previous.actual_end.isoformat()}).",
        )
    if following is not None and following.actual_start and end is not None and end > following.actual_start:
        raise _bad(
            "actual_end",
            f"actual_end must not be after {following.name} started ({following.actual_start.isoformat()}).",
        )


@transaction.atomic
def phase_backfill_dates(
    *,
    actor: User,
    phase: Phase,
    reason: str,
    actual_start: date | Unset | None = UNSET,
    actual_end: date | Unset | None = UNSET,
) -> Phase:
    """Leads of the program only: set a started phase's actual start and/or end; a date not given keeps its value.

    The old dates stay in the history with the reason; freeze windows on the phase follow."""
    policies.require_lead(actor, phase.program, "backfill phase dates")
    if not reason.strip():
        raise _bad("reason", "Say why the actual dates change.")
    neighbours = list(
        Phase.objects.select_for_update(of=("self",))
        .select_related("program")
        .filter(program_id=phase.program_id)
        .order_by("order")
    )
    phase = next(p for p in neighbours if p.pk == phase.pk)
    require_state(
        subject=f"Phase '{phase.name}'",
        state=phase.status,
        action="backfilling its dates",
        allowed=Phase.TRANSITIONS["backfill_dates"],
    )
    start = phase.actual_start if isinstance(actual_start, Unset) else actual_start
    end = phase.actual_end if isinstance(actual_end, Unset) else actual_end
    _check_dates(phase, start, end, neighbours)
    before = {"actual_start": _iso(phase.actual_start), "actual_end": _iso(phase.actual_end)}
    after = {"actual_start": _iso(start), "actual_end": _iso(end)}
    if before == after:
        return phase
    phase.actual_start, phase.actual_end = start, end
    phase.save(update_fields=["actual_start", "actual_end"])
    transition_record(
        subject=phase,
        action="dates_backfilled",
        actor=actor,
        reason=reason,
        data={"before": before, "after": after},
    )
    signals.phase_dates_changed.send(sender=Phase, phase_id=phase.pk, cause="dates backfilled")
    return phase


def _iso(day: date | None) -> str | None:
    return day.isoformat() if day else None
