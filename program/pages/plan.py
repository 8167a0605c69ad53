"""Pages for the plan: advancing with confirmation, re-planning, actual dates, migration states, history.

Each page is guarded before it reads input (program.pages.guards: a styled 403 for the wrong
role); each action goes through its service and says how it went with a flash message. A refused form
comes back with what was typed and the service's status (400 bad input, 409 state moved on)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from core.pages.form_submit import form_submit
from core.pages.htmx import HtmxHttpRequest
from core.roles import acting_user
from program import history, policies, selectors, services
from program.models import Phase, Program, WorkloadMigration
from program.pages.guards import lead_required, program_guard
from program.pages.plan_forms import ActualDatesForm, AdvanceForm, MigrationStateForm, ReplanForm
from program.services.plan_shift import AdvancePreview
from program.services.programs import ADVANCE_TOLERANCE_DAYS


def _program(slug: str) -> Program:
    try:
        return selectors.program_get(slug)
    except Program.DoesNotExist:
        raise Http404(f"No program '{slug}'.") from None


# --- advancing -----------------------------------------------------------------------------------


def _advance_context(program: Program, form: AdvanceForm, preview: AdvancePreview | None) -> dict[str, Any]:
    context: dict[str, Any] = {"program": program, "preview": preview, "form": form}
    if preview is not None:
        context.update(
            today=timezone.localdate(), days_off_abs=abs(preview.days_off), tolerance=ADVANCE_TOLERANCE_DAYS
        )
    return context


def _preview(program: Program) -> AdvancePreview | None:
    return services.advance_preview(program, timezone.localdate(), ADVANCE_TOLERANCE_DAYS)


@lead_required("program", "advance phases", key="slug")
def program_advance(request: HttpRequest, slug: str) -> HttpResponse:
    """GET: what advancing would do (the confirmation step, with what a plan shift would move);
    POST: do it."""
    program = _program(slug)
    preview = _preview(program)
    offer_shift = preview is not None and preview.shift is not None
    form = AdvanceForm(request.POST if request.method == "POST" else None, offer_shift=offer_shift)
    status = 200
    if request.method == "POST":
        sent = form_submit(
            form,
            lambda data: services.program_advance(
                actor=acting_user(request),
                program=program,
                reason=data["reason"],
                shift_plan=data.get("shift_plan", False),
            ),
            fallback_field="reason",
        )
        if sent.ok:
            # The result is the phase now active; None when the last phase was completed.
            phase = sent.value
            shifted = " The later plan moved with it." if form.cleaned_data.get("shift_plan") else ""
            messages.success(
                request, (f"Now in {phase.name}." if phase else f"{program.name} completed.") + shifted
            )
            return redirect("program:detail", slug=slug)
        status = sent.status
        program = _program(slug)  # the state that refused it
        preview = _preview(program)
    context = _advance_context(program, form, preview)
    return render(request, "program/advance_confirm.html", context, status=status)


# --- phase dates ---------------------------------------------------------------------------------


def _phase(pk: int) -> Phase:
    return get_object_or_404(Phase.objects.select_related("program"), pk=pk)


def _phase_page(request: HttpRequest, phase: Phase, status: int = 200, **forms_: forms.Form) -> HttpResponse:
    replan = forms_.get("replan") or ReplanForm(
        initial={"planned_start": phase.planned_start, "planned_end": phase.planned_end}
    )
    actual = forms_.get("actual") or ActualDatesForm(
        initial={"actual_start": phase.actual_start, "actual_end": phase.actual_end}
    )
    context = {
        "phase": phase,
        "program": phase.program,
        "replan_form": replan,
        "actual_form": actual,
        "can_replan": phase.status in Phase.TRANSITIONS["replan"],
        "can_backfill": phase.status in Phase.TRANSITIONS["backfill_dates"],
    }
    return render(request, "program/phase_dates.html", context, status=status)


@lead_required("phase", "re-plan phases")
@require_GET
def phase_dates(request: HttpRequest, pk: int) -> HttpResponse:
    return _phase_page(request, _phase(pk))


@require_POST
@lead_required("phase", "re-plan phases")
def phase_replan(request: HttpRequest, pk: int) -> HttpResponse:
    phase = _phase(pk)
    form = ReplanForm(request.POST)
    sent = form_submit(
        form,
        lambda data: services.phase_replan(actor=acting_user(request), phase=phase, **data),
        fallback_field="reason",
    )
    if sent.ok:
        start, end = form.cleaned_data["planned_start"], form.cleaned_data["planned_end"]
        messages.success(request, f"Re-planned {phase.name}: {start:%-d %b %Y} – {end:%-d %b %Y}.")
        return redirect("program:detail", slug=phase.program.slug)
    return _phase_page(request, _phase(pk), sent.status, replan=form)


@require_POST
@lead_required("phase", "backfill phase dates")
def phase_actual_dates(request: HttpRequest, pk: int) -> HttpResponse:
    phase = _phase(pk)
    form = ActualDatesForm(request.POST)
    sent = form_submit(
        form,
        lambda data: services.phase_backfill_dates(actor=acting_user(request), phase=phase, **data),
        fallback_field="reason",
    )
    if sent.ok:
        messages.success(request, f"Recorded the actual dates of {phase.name}.")
        return redirect("program:detail", slug=phase.program.slug)
    return _phase_page(request, _phase(pk), sent.status, actual=form)


# --- migrations ----------------------------------------------------------------------------------


def _migrations_page(
    request: HttpRequest, program: Program, status: int = 200, bound: MigrationStateForm | None = None
) -> HttpResponse:
    rows = []
    for migration in program.migrations.all():
        if bound is not None and bound.migration.pk == migration.pk:
            form = bound
        else:
            form = MigrationStateForm(migration=migration)
        rows.append((migration, form if form.moves else None))
    context = {"program": program, "rows": rows}
    return render(request, "program/migrations.html", context, status=status)


@program_guard("program", policies.require_record_migrations, key="slug")
@require_GET
def program_migrations(request: HttpRequest, slug: str) -> HttpResponse:
    return _migrations_page(request, _program(slug))


@require_POST
@program_guard("migration", policies.require_record_migrations)
def migration_state(request: HttpRequest, pk: int) -> HttpResponse:
    migration = get_object_or_404(WorkloadMigration.objects.select_related("workload", "program"), pk=pk)
    form = MigrationStateForm(request.POST, migration=migration)
    sent = form_submit(
        form,
        lambda data: services.migration_set_state(actor=acting_user(request), migration=migration, **data),
        fallback_field="reason",
    )
    if sent.ok:
        label = WorkloadMigration.State(form.cleaned_data["state"]).label
        messages.success(request, f"{migration.workload.key} is now {label}.")
        return redirect("program:migrations", slug=migration.program.slug)
    return _migrations_page(request, _program(migration.program.slug), sent.status, bound=form)


# --- history -------------------------------------------------------------------------------------


@require_GET
def program_history(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The whole history, a page at a time; htmx asks for the next page's rows only."""
    program = _program(slug)
    if not policies.may_read(request.user, program):
        raise Http404(f"No program '{slug}'.")
    try:
        number = int(request.GET.get("page", "1"))
    except ValueError:
        number = 1
    page = history.program_history(program, number)
    template = "program/_history_rows.html" if request.htmx else "program/history.html"
    return render(request, template, {"program": program, "history": page})
