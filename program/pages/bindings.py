"""The program page's Bindings panel form: bind one template slot (program leads)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from core.errors import ApplicationError
from core.roles import acting_user
from program import services
from program.models import Program
from program.pages.guards import lead_required


@require_POST
@lead_required("program", "bind template slots", key="slug")
def program_bind(request: HttpRequest, slug: str) -> HttpResponse:
    program = get_object_or_404(Program, slug=slug)
    slot, key = request.POST.get("slot", "").strip(), request.POST.get("key", "").strip()
    if not slot or not key:
        messages.error(request, "Choose a slot and the metric or workload to bind it to.")
        return redirect(_panel(program))
    try:
        result = services.program_bind(actor=acting_user(request), program=program, bindings={slot: key})
    except ApplicationError as exc:
        messages.error(request, f"{slot} was not bound: {exc.message}")
        return redirect(_panel(program))
    count = result.criteria_updated
    note = (
        f"Bound {slot} to {result.bound[slot]}: {count} {'criterion' if count == 1 else 'criteria'} updated."
    )
    if result.skipped_gates:
        note += f" Left as decided: {', '.join(result.skipped_gates)}."
    messages.success(request, note)
    return redirect(_panel(program))


def _panel(program: Program) -> str:
    return reverse("program:detail", kwargs={"slug": program.slug}) + "#bindings"
