"""Who may do what in the program app: every permission rule of programs, phases, gates, criteria,
bindings, migrations and memberships, in one place. The services ask these; the API's write rules
(program/api/rules.py) and the pages ask the same functions before reading any input.

Roles are held per program (issue 25): a `ProgramMembership` gives a user, or every member of a group
(a team), the role lead, engineer or viewer in one program. A **platform admin** (group
`platform-admins`, or a superuser) acts everywhere. The global group `program-leads` means "may create
programs"; a program's creator becomes its lead (program_create).

A user's memberships are read in one query and kept on the user object (like core.roles.group_names),
so a page or a list asks as often as it likes for one query per request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet

from core.errors import ApplicationError
from core.policies import is_platform_admin
from core.roles import FRAMEWORK_ENGINEERS, METRIC_OWNERS, PROGRAM_LEADS, group_names
from program.models import Program, ProgramMembership

if TYPE_CHECKING:
    from program.models import Gate

Role = ProgramMembership.Role
AnyUser = User | AnonymousUser

# Stronger roles first: a user who is a viewer in person and a lead through a team is a lead.
ROLE_RANK: dict[str, int] = {"lead": 3, "engineer": 2, "viewer": 1}

MSG_LEAD_ONLY = "Only a lead of program '{program}' or a platform admin may {action}."
MSG_LEAD_ANYWHERE = "Only a lead of a program or a platform admin may {action}."
MSG_CREATE_PROGRAMS = "Only a program creator (group program-leads) or a platform admin may create programs."
MSG_EVALUATE = "Only a lead of program '{program}', a metric owner or a platform admin may evaluate gates."
MSG_MIGRATIONS = (
    "Only a lead or engineer of program '{program}', a framework engineer or a platform admin may record "
    "migrations."
)
MSG_NOT_READABLE = "There is no program '{program}'."

# The attribute of a user object that keeps {program id: role} once fetched.
_ROLES_CACHE = "_program_roles_cache"
_LED_SLUGS_CACHE = "_led_program_slugs_cache"


# --- who someone is -----------------------------------------------------------------------------------


def member_roles(user: AnyUser) -> Mapping[int, str]:
    """{program id: the user's strongest role there}, in person or through a group; one query per user
    object."""
    if not user.is_authenticated:
        return {}
    cached: dict[int, str] | None = getattr(user, _ROLES_CACHE, None)
    if cached is None:
        groups = User.groups.through.objects.filter(user_id=user.pk).values("group_id")
        rows = (
            ProgramMembership.objects.filter(Q(user_id=user.pk) | Q(group_id__in=groups))
            .order_by()
            .values_list("program_id", "role")
        )
        cached = {}
        for program_id, role in rows:
            held = cached.get(program_id)
            if held is None or ROLE_RANK[role] > ROLE_RANK[held]:
                cached[program_id] = role
        setattr(user, _ROLES_CACHE, cached)
    return cached


def member_roles_forget(user: AnyUser | None) -> None:
    """After a membership of this user object changed: the next question reads them again."""
    for cache in (_ROLES_CACHE, _LED_SLUGS_CACHE):
        if user is not None and hasattr(user, cache):
            delattr(user, cache)


def member_roles_add_lead(user: AnyUser, program_id: int) -> None:
    """The user now leads this program (its creator): known without reading the memberships again."""
    cached: dict[int, str] | None = getattr(user, _ROLES_CACHE, None)
    if cached is not None:
        cached[program_id] = Role.LEAD
    if hasattr(user, _LED_SLUGS_CACHE):
        delattr(user, _LED_SLUGS_CACHE)


def member_roles_prime(user: AnyUser, roles: dict[int, str]) -> None:
    """For a list of users read in one query (the approvers of an exception): what they hold in the
    programs the caller asks about, so that no user costs a query of its own."""
    setattr(user, _ROLES_CACHE, roles)


def member_user_ids(program_id: int, *, role: str = "") -> QuerySet[User, int]:
    """The ids of the program's members (with `role`: of those holding it), in person or through a
    group: a subquery, so a caller filters users by it in one query."""
    memberships = ProgramMembership.objects.filter(program_id=program_id, **({"role": role} if role else {}))
    groups = memberships.filter(group__isnull=False).order_by().values("group_id")
    in_person = memberships.filter(user__isnull=False).order_by().values("user_id")
    return User.objects.filter(Q(pk__in=in_person) | Q(groups__in=groups)).values_list("pk", flat=True)


def lead_user_ids(program_id: int) -> QuerySet[User, int]:
    """The ids of the users who lead the program, in person or through a group (a subquery)."""
    return member_user_ids(program_id, role=Role.LEAD)


def members_to_notify(program_id: int, *, role: str = "") -> list[User]:
    """The active members (with `role`: those holding it) who hear about the program: its notices go
    to them, not to every lead of the organisation. Platform admins act everywhere but hear only about
    the programs they are members of. One query."""
    return list(
        User.objects.filter(pk__in=member_user_ids(program_id, role=role), is_active=True).order_by("pk")
    )


def led_program_slugs(user: AnyUser) -> frozenset[str]:
    """The keys of the programs the user leads (for core's rules that name programs by key, e.g. who
    manages a program's webhook endpoints); one query per user object, none when they lead nothing."""
    cached: frozenset[str] | None = getattr(user, _LED_SLUGS_CACHE, None)
    if cached is None:
        led = led_program_ids(user)
        cached = (
            frozenset(Program.objects.filter(pk__in=led).values_list("slug", flat=True))
            if led
            else frozenset()
        )
        setattr(user, _LED_SLUGS_CACHE, cached)
    return cached


def program_role(user: AnyUser, program_id: int) -> str | None:
    return member_roles(user).get(program_id)


def led_program_ids(user: AnyUser) -> frozenset[int]:
    return frozenset(pid for pid, role in member_roles(user).items() if role == Role.LEAD)


def is_lead(user: AnyUser, program_id: int) -> bool:
    """A lead of that program, or a platform admin (who acts everywhere)."""
    return is_platform_admin(user) or program_role(user, program_id) == Role.LEAD


def leads_any_program(user: AnyUser) -> bool:
    return is_platform_admin(user) or bool(led_program_ids(user))


def is_member(user: AnyUser, program_id: int) -> bool:
    return program_id in member_roles(user)


# --- the rules ----------------------------------------------------------------------------------------


def require_lead(user: AnyUser, program: Program, action: str) -> None:
    """`action` completes "Only a lead of program 'x' or a platform admin may …"."""
    if not is_lead(user, program.pk):
        raise PermissionDenied(MSG_LEAD_ONLY.format(program=program.slug, action=action))


def require_lead_of_gate(user: AnyUser, gate: Gate, action: str) -> None:
    require_lead(user, gate.phase.program, action)


def require_lead_anywhere(user: AnyUser, action: str) -> None:
    """The API's pre-check when the program is named in the body (adding a gate): someone who leads no
    program is refused before the body is read; the service then asks about that program."""
    if not leads_any_program(user):
        raise PermissionDenied(MSG_LEAD_ANYWHERE.format(action=action))


def may_create_programs(user: AnyUser) -> bool:
    return is_platform_admin(user) or PROGRAM_LEADS in group_names(user)


def require_create_programs(user: AnyUser) -> None:
    if not may_create_programs(user):
        raise PermissionDenied(MSG_CREATE_PROGRAMS)


def may_evaluate(user: AnyUser, program_id: int) -> bool:
    """Evaluating can move a gate to ready and notify its leads, so not everyone may ask for it."""
    return is_lead(user, program_id) or METRIC_OWNERS in group_names(user)


def require_evaluate(user: AnyUser, program: Program) -> None:
    if not may_evaluate(user, program.pk):
        raise PermissionDenied(MSG_EVALUATE.format(program=program.slug))


def may_record_migrations(user: AnyUser, program_id: int) -> bool:
    return (
        is_lead(user, program_id)
        or program_role(user, program_id) == Role.ENGINEER
        or FRAMEWORK_ENGINEERS in group_names(user)
    )


def require_record_migrations(user: AnyUser, program: Program) -> None:
    if not may_record_migrations(user, program.pk):
        raise PermissionDenied(MSG_MIGRATIONS.format(program=program.slug))


def may_manage_members(user: AnyUser, program_id: int) -> bool:
    """A program's leads manage its members (so a creator can add the team without an admin), and a
    platform admin manages every program's."""
    return is_lead(user, program_id)


def require_manage_members(user: AnyUser, program: Program) -> None:
    require_lead(user, program, "manage its members")


# --- reading private programs -------------------------------------------------------------------------


def may_read(user: AnyUser, program: Program) -> bool:
    """A private program is read by its members and platform admins only; others are told it does not
    exist (404), as for a key that names nothing."""
    return not program.is_private or is_platform_admin(user) or is_member(user, program.pk)


def readable_filter(user: AnyUser, field: str = "") -> Q:
    """A filter for any query over rows of programs: `field` is the path to the program
    ("phase__program" for gates, "" for programs themselves)."""
    prefix = f"{field}__" if field else ""
    if is_platform_admin(user):
        return Q()
    return Q(**{f"{prefix}is_private": False}) | Q(**{f"{prefix}pk__in": list(member_roles(user))})


def hidden_program_slugs(user: AnyUser) -> frozenset[str]:
    """The keys of the private programs `user` may not read (core asks, e.g. for webhook endpoints
    scoped to one); one query, none for a platform admin."""
    if is_platform_admin(user):
        return frozenset()
    private = Program.objects.filter(is_private=True).exclude(pk__in=list(member_roles(user)))
    return frozenset(private.values_list("slug", flat=True))


def programs_readable(user: AnyUser, programs: QuerySet[Program] | None = None) -> QuerySet[Program]:
    return (Program.objects.all() if programs is None else programs).filter(readable_filter(user))


def require_read(user: AnyUser, program: Program, what: str | None = None) -> None:
    """The API's 404 for a private program this user may not read. `what` names the row asked for
    ("gate 4", "freeze window 7") when it is not the program itself, so that the answer is the one a
    row that does not exist gets, and does not name the private program."""
    if not may_read(user, program):
        message = f"There is no {what}." if what else MSG_NOT_READABLE.format(program=program.slug)
        raise ApplicationError(message, status=404)
