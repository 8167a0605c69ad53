"""The incidents page (list, filing form, MTTR chart) and one incident's page (edit, runbook, resolve)."""

from __future__ import annotations

from datetime import timedelta
from typing import cast

from django.contrib import messages
from django.contrib.auth.models import AnonymousUser, User
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from core.audit import transitions_for
from core.charts import line_chart
from core.errors import ApplicationError
from core.pages.form_submit import form_submit
from core.pages.guards import role_required
from core.pages.htmx import HtmxHttpRequest
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS, acting_user, has_role
from incidents import selectors, services
from incidents.chart import mttr_chart
from incidents.models import TIME_FIELDS, Incident, Severity
from incidents.pages.incidents_forms import ChecklistForm, IncidentForm, ResolveForm
from metrics.models import System

WRITERS = (FRAMEWORK_ENGINEERS, PROGRAM_LEADS)
# The chart's windows: incidents opened in the last N days ("" is all time).
WINDOWS = ("30", "90", "180")
PAGE_SIZE = 50


def _may_write(user: User | AnonymousUser) -> bool:
    return any(has_role(user, role) for role in WRITERS)


def _old_new(request: HttpRequest) -> tuple[str, str]:
    """The two systems the chart compares: ?old=&new=, else the two oldest systems (legacy, rebuilt)."""
    keys = list(System.objects.order_by("pk").values_list("key", flat=True)[:2])
    keys += [""] * (2 - len(keys))
    return request.GET.get("old") or keys[0], request.GET.get("new") or keys[1]


def _filter(request: HttpRequest) -> selectors.IncidentFilter:
    params = request.GET
    severity = params.get("severity", "")
    return selectors.IncidentFilter(
        system=params.get("system", ""),
        bug_class=params.get("bug_class", ""),
        severity=severity if severity in Severity.values else "",
        state=params.get("state", "") if params.get("state") in ("open", "resolved") else "",
    )


def _list_render(
    request: HtmxHttpRequest, form: IncidentForm | None = None, status: int = 200
) -> HttpResponse:
    filters = _filter(request)
    old, new = _old_new(request)
    page = Paginator(selectors.incidents_list(filters), PAGE_SIZE).get_page(request.GET.get("page"))
    days = request.GET.get("days", "")
    window = (
        selectors.IncidentFilter(since=timezone.now() - timedelta(days=int(days)))
        if days in WINDOWS
        else None
    )
    speeds = selectors.incident_speed(window)
    context = {
        "page": page,
        "filters": filters,
        "old": old,
        "new": new,
        "chart": mttr_chart(speeds, old=old, new=new),
        "trend": line_chart(selectors.mttr_by_month([old, new]), unit="h", width=460),
        "days": days if days in WINDOWS else "",
        "windows": WINDOWS,
        "speeds": [s for s in speeds if s.system in (old, new)],
        "recurrences": [r for r in selectors.recurrence_by_month(window) if r.system in (old, new)],
        "systems": System.objects.order_by("key"),
        "bug_classes": selectors.bug_classes_list(),
        "severities": Severity.choices,
        "may_write": _may_write(request.user),
        "form": form or IncidentForm(),
    }
    template = (
        "incidents/_chart.html"
        if request.htmx and request.GET.get("part") == "chart"
        else "incidents/list.html"
    )
    return render(request, template, context, status=status)


@require_GET
def incidents_page(request: HtmxHttpRequest) -> HttpResponse:
    return _list_render(request)


@role_required(*WRITERS, action="file incidents")
@require_POST
def incident_new(request: HttpRequest) -> HttpResponse:
    form = IncidentForm(request.POST)
    sent = form_submit(
        form,
        lambda data: services.incident_file(actor=acting_user(request), **data),
        fallback_field="title",
    )
    if not sent.ok:
        # role_required hands on a plain HttpRequest; HtmxMiddleware has set .htmx on it.
        return _list_render(cast(HtmxHttpRequest, request), form, sent.status)
    incident = sent.value
    messages.success(request, f"Incident #{incident.pk} filed; the owner team was told.")
    return redirect("incidents:detail", incident.pk)


def _resolve_form(incident: Incident) -> ResolveForm:
    """Both times default to now (to the minute); an incident mitigated already keeps that time."""
    now = timezone.now().replace(second=0, microsecond=0)
    return ResolveForm(initial={"mitigated_at": incident.mitigated_at or now, "resolved_at": now})


def _detail_render(
    request: HttpRequest,
    pk: int,
    form: IncidentForm | None = None,
    status: int = 200,
    resolve_form: ResolveForm | None = None,
) -> HttpResponse:
    incident = get_object_or_404(selectors.incidents_list(), pk=pk)
    initial = {
        name: getattr(incident, name)
        for name in ("title", "severity", "troubleshooting", "link", "owner_team", *TIME_FIELDS)
    }
    initial |= {
        "recurrence_of": incident.recurrence_of_id,
        "system": incident.system.key,
        "component": incident.component.key,
        "workload": incident.workload.key if incident.workload else None,
        "bug_class": incident.bug_class.key,
    }
    return render(
        request,
        "incidents/detail.html",
        {
            "incident": incident,
            "form": form or IncidentForm(initial=initial),
            "checklist": ChecklistForm(steps=incident.checklist),
            "resolve_form": resolve_form or _resolve_form(incident),
            "history": transitions_for(incident),
            "recurrences": list(incident.recurrences.order_by("opened_at", "pk").only("pk")),
            "may_write": _may_write(request.user),
        },
        status=status,
    )


@require_GET
def incident_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _detail_render(request, pk)


@role_required(*WRITERS, action="update incidents")
@require_POST
def incident_edit(request: HttpRequest, pk: int) -> HttpResponse:
    incident = get_object_or_404(selectors.incidents_list(), pk=pk)
    form = IncidentForm(request.POST)
    sent = form_submit(
        form,
        lambda data: services.incident_update(
            actor=acting_user(request), incident=incident, changes=cast(services.IncidentChanges, data)
        ),
        fallback_field="title",
    )
    if not sent.ok:
        return _detail_render(request, pk, form, sent.status)
    messages.success(request, f"Incident #{pk} saved.")
    return redirect("incidents:detail", pk)


@role_required(*WRITERS, action="resolve incidents")
@require_POST
def incident_resolve(request: HttpRequest, pk: int) -> HttpResponse:
    """The confirmed resolve: the times the person stated, checked by the service; a refusal shows the
    form again, open, with its error summary."""
    incident = get_object_or_404(selectors.incidents_list(), pk=pk)
    form = ResolveForm(request.POST)
    sent = form_submit(
        form,
        lambda data: services.incident_resolve(actor=acting_user(request), incident=incident, **data),
        fallback_field="resolved_at",
    )
    if not sent.ok:
        return _detail_render(request, pk, status=sent.status, resolve_form=form)
    messages.success(request, f"Incident #{pk} resolved; its MTTR and MTTD are now evidence.")
    return redirect("incidents:detail", pk)


@role_required(*WRITERS, action="update incidents")
@require_POST
def incident_checklist(request: HttpRequest, pk: int) -> HttpResponse:
    """The runbook's checkboxes: the steps ticked are done, the rest are not. Each tick posts the list
    (htmx) and gets the runbook back; without JS, the form's button posts it and the page reloads."""
    htmx = bool(cast(HtmxHttpRequest, request).htmx)
    incident = get_object_or_404(selectors.incidents_list(), pk=pk)
    form = ChecklistForm(request.POST, steps=incident.checklist)
    done = form.cleaned_data["done_steps"] if form.is_valid() else []
    try:
        incident = services.incident_update(
            actor=acting_user(request), incident=incident, changes={"done_steps": done}
        )
    except ApplicationError as exc:
        if htmx:
            return HttpResponse(exc.message, status=exc.status)
        messages.error(request, exc.message)
        return redirect("incidents:detail", pk)
    if htmx:  # a tick: the runbook again, saying what was saved
        context = {
            "incident": incident,
            "checklist": ChecklistForm(steps=incident.checklist),
            "may_write": True,
            "saved": {"done": len(done), "steps": len(incident.checklist)},
        }
        return render(request, "incidents/_checklist.html", context)
    messages.success(request, "Runbook checklist saved.")
    return redirect("incidents:detail", pk)
