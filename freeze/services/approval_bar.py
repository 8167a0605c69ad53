"""How many approvals an exception needs, and whether a program lead must be among them: decided once,
at submission (and again at a resubmission after a material edit), and stored on the exception with the
rule in words. Later changes to the program's rule or its gates never move a submitted exception.

The base rule: low and medium risk need one approval; high risk needs two, one a program lead.
The rising approval bar (Program.approval_bar_weeks, N): a medium-risk change starting within N weeks
before the due date of one of the program's undecided gates, or during its frontier sprint, needs one
approval more and a program lead among the approvers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from freeze.models import FreezeException
from program.models import Gate, Phase

Risk = FreezeException.Risk


@dataclass(frozen=True)
class ApprovalRequirement:
    approvals: int
    lead_required: bool
    rule: str


def _count(approvals: int) -> str:
    return "1 approval" if approvals == 1 else f"{approvals} approvals"


def _needs(approvals: int, lead: bool) -> str:
    return _count(approvals) + (", a program lead among them" if lead else "")


def _bar_reason(exception: FreezeException, weeks: int) -> str | None:
    """Why the bar applies to this change, or None: the nearest gate due within `weeks` after the change
    starts, else the frontier sprint it starts in. Two queries."""
    program = exception.window.program
    start = exception.change_starts_at.date()
    gate = (
        Gate.objects.filter(
            phase__program=program,
            status__in=Gate.UNDECIDED,
            due_date__gte=start,
            due_date__lte=start + timedelta(weeks=weeks),
        )
        .order_by("due_date", "pk")
        .first()
    )
    if gate is not None:
        days = (gate.due_date - start).days
        return (
            f"the change starts {start:%-d %b %Y}, {days} day{'' if days == 1 else 's'} before gate "
            f"'{gate.name}' is due ({gate.due_date:%-d %b %Y}), within {weeks} week{'' if weeks == 1 else 's'}"
        )
    for phase in Phase.objects.filter(program=program, kind=Phase.Kind.FRONTIER):
        first = phase.actual_start or phase.planned_start
        last = phase.actual_end or phase.planned_end
        if first <= start <= last:
            return f"the change starts {start:%-d %b %Y}, during {phase.name} ({first:%-d %b} – {last:%-d %b %Y})"
    return None


def approval_requirement(exception: FreezeException) -> ApprovalRequirement:
    """The approvals `exception` needs if it were submitted now, and the rule in words."""
    program = exception.window.program
    if exception.risk == Risk.HIGH:
        return ApprovalRequirement(
            2, True, "Base rule: high risk needs 2 approvals, a program lead among them."
        )
    if exception.risk == Risk.LOW:
        return ApprovalRequirement(1, False, "Base rule: low risk needs 1 approval.")
    weeks = program.approval_bar_weeks
    if weeks is None:
        return ApprovalRequirement(
            1, False, f"Base rule: medium risk needs 1 approval ({program.name} sets no rising approval bar)."
        )
    reason = _bar_reason(exception, weeks)
    if reason is None:
        return ApprovalRequirement(
            1,
            False,
            f"Base rule: medium risk needs 1 approval. {program.name}'s rising approval bar ({weeks} "
            f"week{'' if weeks == 1 else 's'} before a gate, and the frontier sprint) does not apply: no "
            "undecided gate is due that soon after the change starts, and it is outside the frontier sprint.",
        )
    return ApprovalRequirement(
        2,
        True,
        f"Rising approval bar of {program.name}: {reason}, so medium risk needs {_needs(2, True)} "
        "(one more than the base rule's 1).",
    )


def approval_requirement_apply(exception: FreezeException) -> ApprovalRequirement:
    """Fix the requirement on the exception (the caller saves it with its transition)."""
    requirement = approval_requirement(exception)
    exception.required_approvals = requirement.approvals
    exception.requires_lead_approval = requirement.lead_required
    exception.approval_rule = requirement.rule
    return requirement
