"""The program page's approval-bar form (program leads): set the weeks, or clear them to turn it off."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from core.errors import ApplicationError
from core.roles import acting_user
from program import services
from program.blueprints.schema import MAX_BAR_WEEKS
from program.models import Program
from program.pages.guards import lead_required


class ApprovalBarForm(forms.Form):
    approval_bar_weeks = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_BAR_WEEKS,
        label="Weeks before a gate",
        help_text="Medium-risk freeze exceptions starting this close to an undecided gate's due date, or in "
        "the frontier sprint, need one more approval and a program lead. Empty: off.",
    )


@require_POST
@lead_required("program", "set the approval bar", key="slug")
def program_approval_bar(request: HttpRequest, slug: str) -> HttpResponse:
    program = get_object_or_404(Program, slug=slug)
    form = ApprovalBarForm(request.POST)
    if not form.is_valid():
        errors = "; ".join(str(e) for errs in form.errors.values() for e in errs)
        messages.error(request, f"Approval bar not changed: {errors}")
        return redirect("program:detail", slug=slug)
    weeks = form.cleaned_data["approval_bar_weeks"]
    try:
        services.program_set_approval_bar(actor=acting_user(request), program=program, weeks=weeks)
    except ApplicationError as exc:
        messages.error(request, f"Approval bar not changed: {exc}")
    else:
        messages.success(
            request,
            f"Approval bar set to {weeks} week{'' if weeks == 1 else 's'} before a gate."
            if weeks
            else "Approval bar turned off.",
        )
    return redirect("program:detail", slug=slug)
