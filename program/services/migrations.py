"""Workload migrations: which wave, and where each workload runs (old, both, new, rolled back)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.audit import transition_record
from core.errors import ApplicationError
from core.transitions import require_state
from metrics.models import Workload
from program import policies
from program.models import Program, WorkloadMigration

State = WorkloadMigration.State


@transaction.atomic
def migration_upsert(
    *, actor: User, program: Program, workload: Workload, wave: int, notes: str = ""
) -> WorkloadMigration:
    """Plan a workload's migration wave (or move it to another wave). Program leads and framework
    engineers."""
    policies.require_record_migrations(actor, program)
    migration, created = WorkloadMigration.objects.update_or_create(
        program=program, workload=workload, defaults={"wave": wave, "notes": notes}
    )
    transition_record(
        subject=migration,
        action="planned" if created else "re-waved",
        actor=actor,
        to_state=migration.state,
        data={"wave": wave},
    )
    return migration


@transaction.atomic
def migration_set_state(
    *, actor: User, migration: WorkloadMigration, state: str, reason: str
) -> WorkloadMigration:
    """Move a workload to `state` (allowed-from table on the model), with the reason in its history.
    Program leads and framework engineers."""
    policies.require_record_migrations(actor, migration.program)
    migration = WorkloadMigration.objects.select_for_update().select_related("workload").get(pk=migration.pk)
    if state not in State.values:
        raise ApplicationError(f"state must be one of {', '.join(State.values)}.", status=400, field="state")
    require_state(
        subject=migration.workload.key,
        state=migration.state,
        action=f"moving to {state}",
        allowed=WorkloadMigration.TRANSITIONS[state],
    )
    # Every move says why (the program history shows it); a rollback most of all.
    if not reason.strip():
        message = (
            "A rollback needs a reason." if state == State.ROLLED_BACK else "Say why the workload moves."
        )
        raise ApplicationError(message, status=400, field="reason")
    today = timezone.localdate()
    previous = migration.state
    migration.state = state
    if state == State.DUAL_RUN:
        migration.dual_run_started = today
    elif state == State.ON_NEW:
        migration.moved_on = today
    else:
        migration.rolled_back_on = today
    migration.save()
    transition_record(
        subject=migration, action="state", actor=actor, from_state=previous, to_state=state, reason=reason
    )
    return migration
