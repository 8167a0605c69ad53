"""A program lead sets (or turns off) the program's rising approval bar: the weeks before a gate's due
date in which medium-risk freeze exceptions need one more approval and a program lead. freeze reads
the rule when an exception is submitted (freeze.services.approval_bar); exceptions already submitted
keep what they were given."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from core.audit import transition_record
from core.errors import ApplicationError
from program import policies
from program.blueprints.schema import MAX_BAR_WEEKS
from program.models import Program

MSG_WEEKS = f"approval_bar_weeks must be a whole number of weeks from 1 to {MAX_BAR_WEEKS}, or empty (off)."


def program_set_approval_bar(*, actor: User, program: Program, weeks: int | None) -> Program:
    """Leads of the program only: the bar decides who must approve freeze exceptions near a due date."""
    policies.require_lead(actor, program, "set the approval bar")
    if weeks is not None and (
        isinstance(weeks, bool) or not isinstance(weeks, int) or not 1 <= weeks <= MAX_BAR_WEEKS
    ):
        raise ApplicationError(MSG_WEEKS, status=400, field="approval_bar_weeks")
    with transaction.atomic():
        program = Program.objects.select_for_update().get(pk=program.pk)
        before = program.approval_bar_weeks
        if before == weeks:
            return program
        program.approval_bar_weeks = weeks
        program.save(update_fields=["approval_bar_weeks"])
        transition_record(
            subject=program,
            action="approval_bar_set",
            actor=actor,
            data={"before": before, "after": weeks},
        )
    return program
