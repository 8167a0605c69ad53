"""A program's Members page: who holds which role there (users and groups), for anyone who may read the
program; and, for those who may manage its members (program.policies.may_manage_members: its leads and
platform admins), forms to add a user or a group with a role, change a role and remove a member. Every
change is program.services.memberships' (the audit row, the last lead kept, the named lead handed on), as
through the API.

The forms post through htmx and get the members panel back, the flash message with it; without
JavaScript they post normally and are redirected back (a refusal renders the page with the error). A
refusal shows next to what was refused: an unknown user or group on its field, "a program keeps one
lead" on that member's row. Nobody sees a form they may not submit, and a forced POST gets the 403
page before any input is read. The page runs the same queries whatever the number of members."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.models import Group
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import ApplicationError
from core.pages.form_submit import form_submit
from core.pages.htmx import HtmxHttpRequest
from core.roles import acting_user
from program import policies, selectors
from program.models import Program, ProgramMembership
from program.pages.guards import page_program
from program.pages.members_forms import AddMemberForm, MemberRoleForm
from program.services.memberships import membership_grant, membership_remove


def _label(membership: ProgramMembership) -> str:
    if membership.user is not None:
        return membership.user.username
    return f"group {membership.group.name if membership.group is not None else ''}"


def _render(
    request: HtmxHttpRequest,
    program: Program,
    *,
    add_form: AddMemberForm | None = None,
    row_errors: dict[int, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    can_manage = policies.may_manage_members(request.user, program.pk)
    context: dict[str, Any] = {
        "program": program,
        "members": selectors.program_members(program),
        "can_manage": can_manage,
        "add_form": add_form or AddMemberForm(),
        "row_errors": row_errors or {},
        "roles": ProgramMembership.Role.choices,
        # The group field's suggestions: teams are few, and only a manager sees the form.
        "group_names": list(Group.objects.order_by("name").values_list("name", flat=True))
        if can_manage
        else [],
    }
    template = "program/_members_panel.html" if request.htmx else "program/members.html"
    return render(request, template, context, status=status)


def _done(request: HtmxHttpRequest, program: Program) -> HttpResponse:
    if request.htmx:
        return _render(request, program)
    return redirect("program:members", slug=program.slug)


def _named_lead_moved(program: Program) -> str:
    """Re-read the program's named lead, which the service hands on when the named lead's role goes,
    and say so in the flash message ("" when it stayed)."""
    named_before = program.lead_id
    program.refresh_from_db(fields=["lead"])
    if program.lead_id == named_before:
        return ""
    return f" {program.lead.username} is now the program's named lead."


def _managed_program(request: HtmxHttpRequest, slug: str) -> Program:
    """The program, once the policy allows managing its members (a 404 if it may not be read)."""
    program = page_program("program", slug, request.user)
    policies.require_manage_members(request.user, program)
    return program


@require_http_methods(["GET", "POST"])
def program_members(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """GET: the page. POST: add a user or a group with a role (the service changes the role of one
    who is a member already)."""
    if request.method != "POST":
        return _render(request, page_program("program", slug, request.user))
    program = _managed_program(request, slug)
    form = AddMemberForm(request.POST)
    held = {(m.user_id, m.group_id): m.role for m in ProgramMembership.objects.filter(program=program)}
    sent = form_submit(
        form,
        lambda data: membership_grant(
            actor=acting_user(request),
            program=program,
            role=data["role"],
            user=data["user"],
            group=data["group"],
        ),
    )
    if not sent.ok:
        return _render(request, program, add_form=form, status=sent.status)
    membership = sent.value
    before = held.get((membership.user_id, membership.group_id))
    name, role = _label(membership), membership.get_role_display().lower()
    if before is None:
        messages.success(request, f"Added {name} as {role}.")
    elif before == membership.role:
        messages.info(request, f"{name} is a {role} already.")
    else:
        messages.success(request, f"Changed {name} from {before} to {role}.")
    return _done(request, program)


@require_POST
def program_member(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """One member's row: change the role, or remove the member (the button named `remove`)."""
    program = _managed_program(request, slug)
    membership = (
        ProgramMembership.objects.filter(program=program, pk=pk).select_related("user", "group").first()
    )
    if membership is None:
        raise Http404(f"Program '{slug}' has no membership {pk}.")
    name, before = _label(membership), membership.role
    try:
        if "remove" in request.POST:
            membership_remove(actor=acting_user(request), membership=membership)
            moved = _named_lead_moved(program)
            messages.success(request, f"Removed {name} ({before}) from {program.name}.{moved}")
            return _done(request, program)
        form = MemberRoleForm(request.POST)
        if not form.is_valid():
            errors = "; ".join(str(e) for e in form.errors.get("role", []))
            return _render(request, program, row_errors={pk: f"Role: {errors}"}, status=400)
        role = form.cleaned_data["role"]
        if role == before:
            messages.info(request, f"{name} is a {before} already.")
            return _done(request, program)
        membership_grant(
            actor=acting_user(request),
            program=program,
            role=role,
            user=membership.user,
            group=membership.group,
        )
    except ApplicationError as exc:
        # The last lead (or the named lead) kept, or removed by someone else meanwhile: said on that row.
        return _render(request, program, row_errors={pk: exc.message}, status=exc.status)
    moved = _named_lead_moved(program)
    messages.success(request, f"Changed {name} from {before} to {role}.{moved}")
    return _done(request, program)
