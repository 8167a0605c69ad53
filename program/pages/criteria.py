"""Gate page actions on criteria: add, edit, delete, re-pin. Program leads only; each answers with the
gate panel (htmx) or a redirect to the gate page, with a message saying what happened."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_POST

from core.errors import ApplicationError
from core.pages.form_submit import form_submit
from core.roles import acting_user
from program import services
from program.models import Criterion, Gate
from program.pages.criteria_forms import CriterionForm, edit_form
from program.pages.guards import lead_required
from program.pages.programs import gate_answer


def _evaluate(request: HttpRequest, gate: Gate) -> None:
    """At once, so the page that answers shows results for the criteria as they now are (the service
    also queued an evaluation for API callers; that one will find these inputs and reuse this)."""
    services.gate_evaluate(gate=gate, actor=acting_user(request))


def _refused(request: HttpRequest, gate: Gate, exc: ApplicationError) -> HttpResponse:
    """A conflict with the gate's state (decided meanwhile): said on the page, nothing changed."""
    messages.error(request, exc.message)
    return gate_answer(request, gate, exc.status)


@require_POST
@lead_required("gate", "add criteria")
def criterion_add(request: HttpRequest, pk: int) -> HttpResponse:
    gate = get_object_or_404(Gate, pk=pk)
    form = CriterionForm(request.POST, prefix="new")
    sent = form_submit(
        form,
        lambda data: services.criterion_add(actor=acting_user(request), gate=gate, **data),
        fallback_field="name",
    )
    if sent.ok:
        criterion = sent.value
        _evaluate(request, gate)
        messages.success(request, f"Added “{criterion.name}” and evaluated the gate again.")
        return gate_answer(request, gate)
    if not form.errors:
        messages.error(request, "The criterion was not added.")
    return gate_answer(request, gate, sent.status, add_form=form)


@require_POST
@lead_required("criterion", "edit criteria")
def criterion_edit(request: HttpRequest, pk: int) -> HttpResponse:
    criterion = get_object_or_404(Criterion.objects.select_related("gate", "metric", "workload"), pk=pk)
    form = edit_form(criterion, request.POST)
    sent = form_submit(
        form,
        lambda data: services.criterion_edit(actor=acting_user(request), criterion=criterion, **data),
        fallback_field="name",
    )
    if sent.ok:
        _evaluate(request, criterion.gate)
        messages.success(request, f"Saved “{form.cleaned_data['name']}” and evaluated the gate again.")
        return gate_answer(request, criterion.gate)
    return gate_answer(request, criterion.gate, sent.status, edit_forms={criterion.pk: form})


@require_POST
@lead_required("criterion", "delete criteria")
def criterion_delete(request: HttpRequest, pk: int) -> HttpResponse:
    criterion = get_object_or_404(Criterion.objects.select_related("gate"), pk=pk)
    try:
        services.criterion_delete(actor=acting_user(request), criterion=criterion)
    except ApplicationError as exc:
        return _refused(request, criterion.gate, exc)
    _evaluate(request, criterion.gate)
    messages.success(request, f"Deleted “{criterion.name}” and evaluated the gate again.")
    return gate_answer(request, criterion.gate)


@require_POST
@lead_required("gate", "re-pin criteria")
def gate_repin(request: HttpRequest, pk: int) -> HttpResponse:
    gate = get_object_or_404(Gate, pk=pk)
    before = set(gate.criteria.values_list("pk", "metric_id"))
    try:
        gate = services.gate_repin(actor=acting_user(request), gate=gate)
    except ApplicationError as exc:
        return _refused(request, gate, exc)
    moved = len(before - set(gate.criteria.values_list("pk", "metric_id")))
    if moved:
        _evaluate(request, gate)
    messages.success(
        request,
        f"Re-pinned {moved} criteri{'on' if moved == 1 else 'a'} to the active versions."
        if moved
        else "Every criterion already pins an active version.",
    )
    return gate_answer(request, gate)
