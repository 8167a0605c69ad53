"""Program memberships: granting a role in one program to a user or a group (a team), changing it,
removing it. Who may: program.policies.require_manage_members (the program's leads, platform admins)."""

from __future__ import annotations

from django.contrib.auth.models import Group, User
from django.db import transaction

from core.audit import transition_record
from core.errors import ApplicationError
from program import policies
from program.models import Program, ProgramMembership

Role = ProgramMembership.Role

MSG_ONE_MEMBER = "Name either a user or a group, not both and not neither."
MSG_LAST_LEAD = "'{member}' is the last lead of program '{program}': grant another lead first."
MSG_UNKNOWN_ROLE = "role must be one of: lead, engineer, viewer."
MSG_NAMED_LEAD = (
    "'{member}' is the named lead of program '{program}' and no other user leads it: grant another "
    "user the lead role first."
)


def _member_name(user: User | None, group: Group | None) -> str:
    if user is not None:
        return f"user:{user.username}"
    return f"group:{group.name if group is not None else ''}"


def membership_grant(
    *, actor: User, program: Program, role: str, user: User | None = None, group: Group | None = None
) -> ProgramMembership:
    """Give `user` or `group` the role `role` in `program`, or change the role it holds there."""
    policies.require_manage_members(actor, program)
    if (user is None) == (group is None):
        raise ApplicationError(MSG_ONE_MEMBER, status=400, field="member")
    if role not in Role.values:
        raise ApplicationError(MSG_UNKNOWN_ROLE, status=400, field="role")
    member = _member_name(user, group)
    with transaction.atomic():
        # The program's row serializes every change of its members (the last-lead check below).
        program = Program.objects.select_for_update().get(pk=program.pk)
        held = ProgramMembership.objects.filter(program=program, user=user, group=group).first()
        if held is not None and held.role == role:
            return held
        data: dict[str, str] = {"member": member, "role": role}
        if held is not None and held.role == Role.LEAD:
            data.update(_lead_leaving(program, held))
        if held is None:
            held = ProgramMembership.objects.create(
                program=program, user=user, group=group, role=role, granted_by=actor
            )
        else:
            data["previous_role"] = held.role
            held.role, held.granted_by = role, actor
            held.save(update_fields=["role", "granted_by"])
        action = "member_role_changed" if "previous_role" in data else "member_granted"
        transition_record(subject=program, action=action, actor=actor, data=data)
    policies.member_roles_forget(user)
    policies.member_roles_forget(actor)
    return held


def _lead_leaving(program: Program, leaving: ProgramMembership) -> dict[str, str]:
    """A lead's role goes (removed or changed): refused for the last lead; the named lead handed on.
    What the audit row adds (the newly named lead, if any)."""
    _refuse_last_lead(program, leaving)
    return _named_lead_handed_on(program, leaving)


def _refuse_last_lead(program: Program, leaving: ProgramMembership) -> None:
    others = ProgramMembership.objects.filter(program=program, role=Role.LEAD).exclude(pk=leaving.pk)
    if not others.exists():
        raise ApplicationError(MSG_LAST_LEAD.format(member=leaving.member, program=program.slug))


def _named_lead_handed_on(program: Program, leaving: ProgramMembership) -> dict[str, str]:
    """Program.lead, the lead its pages and the API name, stays a user who leads the program: when that
    user's lead role goes, the user lead with the oldest membership takes the name (the audit row says
    so). With only teams left leading, the change is refused: a name must be a person."""
    if leaving.user_id is None or leaving.user_id != program.lead_id:
        return {}
    successor = (
        ProgramMembership.objects.filter(program=program, role=Role.LEAD, user__isnull=False)
        .exclude(pk=leaving.pk)
        .select_related("user")
        .order_by("granted_at", "pk")
        .first()
    )
    if successor is None or successor.user is None:
        raise ApplicationError(MSG_NAMED_LEAD.format(member=leaving.member, program=program.slug))
    program.lead = successor.user
    program.save(update_fields=["lead"])
    return {"named_lead": successor.user.username}


def membership_remove(*, actor: User, membership: ProgramMembership) -> None:
    """Take a member's role in the program away; a program always keeps one lead, and its named lead
    is a user who leads it (409)."""
    policies.require_manage_members(actor, membership.program)
    with transaction.atomic():
        program = Program.objects.select_for_update().get(pk=membership.program_id)
        held = ProgramMembership.objects.filter(pk=membership.pk).select_related("user", "group").first()
        if held is None:
            raise ApplicationError("That membership was removed already.", status=404)
        data = {"member": held.member, "role": held.role}
        if held.role == Role.LEAD:
            data.update(_lead_leaving(program, held))
        held.delete()
        transition_record(subject=program, action="member_removed", actor=actor, data=data)
    policies.member_roles_forget(membership.user)
    policies.member_roles_forget(actor)


def membership_of_creator(*, program: Program, actor: User) -> ProgramMembership:
    """The creator of a program leads it (program_create, inside its transaction)."""
    membership = ProgramMembership.objects.create(
        program=program, user=actor, role=Role.LEAD, granted_by=actor
    )
    policies.member_roles_add_lead(actor, program.pk)
    return membership
