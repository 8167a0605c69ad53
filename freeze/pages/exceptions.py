"""Freeze exception pages: the all-exceptions list, the queues, the form (with its level hint), the
exception page and its actions. Every action goes through services.exception_act, as the API does;
every button comes from exception_allowed_actions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from core.audit import transitions_for
from core.pages.form_submit import form_submit
from core.pages.guards import role_required
from core.pages.htmx import HtmxHttpRequest
from core.roles import FRAMEWORK_ENGINEERS, acting_user, has_role
from freeze import policies, selectors, services
from freeze.models import Component, FreezeException, FreezeWindow
from freeze.pages.ci_panel import ci_panel
from freeze.pages.forms import DecisionForm, ExceptionFilterForm, ExceptionForm, expected_impacts_text
from freeze.selectors.exceptions import (
    LevelHint,
    approval_needs,
    approval_progress,
    component_levels_at,
    exception_allowed_actions,
    exception_approvers,
    exception_for_page,
    exception_level_hint,
)
from freeze.selectors.impact import exception_impacts
from freeze.services.exception_edits import EDITABLE
from freeze.services.exception_workflow import ACT_ACTIONS

PAGE_SIZE = 25
DONE = {
    "submit": "Submitted: the approvers have been notified.",
    "approve": "Your approval is recorded.",
    "reject": "Rejected: the requester has been notified.",
    "withdraw": "Withdrawn.",
    "revoke": "Revoked: the change is no longer allowed.",
}


@require_GET
def exceptions_all(request: HttpRequest) -> HttpResponse:
    """Every exception, filtered on the effective status, component, risk, window and requester, with
    counts per status (of the other filters' rows) and pages of PAGE_SIZE: five queries."""
    readable = policies.exceptions_readable(request.user)
    form = ExceptionFilterForm(request.GET or None)
    _offer_readable_windows(form, request)
    filters, status = {}, ""
    if form.is_valid():
        data = form.cleaned_data
        status = data["status"]
        filters = {key: data[key] for key in ("component", "risk", "window", "requester") if data[key]}
    # Counted on the bare rows: the list's approval-count join would count each approval. current_status
    # is with_effective_status's annotation, which the django-stubs plugin does not follow (#2917).
    counted = dict(
        FreezeException.objects.with_effective_status()  # type: ignore[misc]
        .filter(readable, **filters)
        .order_by()
        .values_list("current_status")
        .annotate(n=Count("pk"))
    )
    counts = [(value, label, counted.get(value, 0)) for value, label in FreezeException.Status.choices]
    rows = selectors.exceptions_list().filter(readable, **filters)
    if status:
        rows = rows.filter(current_status=status)  # type: ignore[misc]  # annotated by exceptions_list
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    without_status = query.copy()
    without_status.pop("status", None)
    context = {
        "query_without_status": without_status.urlencode(),
        "perms_file": has_role(request.user, FRAMEWORK_ENGINEERS),
        "form": form,
        "page": page,
        "counts": counts,
        "total": sum(counted.values()),
        "status": status,
        "query": query.urlencode(),
    }
    return render(request, "freeze/exceptions_all.html", context)


def _form_levels() -> dict[int, str]:
    return component_levels_at(timezone.now())


def _readable_windows(request: HttpRequest) -> QuerySet[FreezeWindow]:
    """The windows a form may offer: a private program's only to its members and platform admins."""
    return FreezeWindow.objects.select_related("program").filter(policies.windows_readable(request.user))


def _offer_readable_windows(form: forms.Form, request: HttpRequest) -> None:
    cast("forms.ModelChoiceField[FreezeWindow]", form.fields["window"]).queryset = _readable_windows(request)


def _exception_or_404(request: HttpRequest, pk: int) -> FreezeException:
    """The exception the URL names, with what its page needs; a 404 for one filed under a private
    program's window that this user may not read, as for one that does not exist."""
    exception = get_object_or_404(exception_for_page(FreezeException.objects.all()), pk=pk)
    if not policies.may_read_window(request.user, exception.window):
        raise Http404(f"No freeze exception {pk}.")
    return exception


@role_required(FRAMEWORK_ENGINEERS, action="file freeze exceptions")
def exception_new(request: HttpRequest) -> HttpResponse:
    # Prefilled from a link (a freeze-list row, a component page); the window only among those offered.
    initial = {"component": request.GET.get("component"), "window": request.GET.get("window")}
    form = ExceptionForm(request.POST or None, initial=initial, levels=_form_levels())
    _offer_readable_windows(form, request)
    status = 200
    if request.method == "POST":
        sent = form_submit(form, lambda data: services.exception_create(actor=acting_user(request), **data))
        if sent.ok:
            exception = sent.value
            messages.success(request, "Draft saved. Submit it when it is ready for review.")
            return redirect("freeze:exception", pk=exception.pk)
        status = sent.status
    return render(request, "freeze/exception_form.html", {"form": form}, status=status)


def exception_edit(request: HttpRequest, pk: int) -> HttpResponse:
    exception = _exception_or_404(request, pk)
    allowed = exception_allowed_actions(acting_user(request), exception)
    allowed.require("edit")
    if not allowed.edit:
        messages.error(request, f"A {exception.effective_status} exception cannot be edited.")
        return redirect("freeze:exception", pk=pk)
    initial = {field: getattr(exception, field) for field in EDITABLE}
    initial["affected_metrics"] = sorted({m.key for m in exception.affected_metrics.all()})
    initial["expected_impacts"] = expected_impacts_text(exception.expected_impacts.all())
    form = ExceptionForm(
        request.POST or None,
        initial={**initial, "component": exception.component.key, "window": exception.window},
    )
    form.fields["component"].disabled = form.fields["window"].disabled = True
    status = 200
    if request.method == "POST":
        sent = form_submit(
            form,
            lambda data: services.exception_edit(
                actor=acting_user(request),
                exception=exception,
                changes=cast(
                    services.ExceptionChanges,
                    {f: data[f] for f in (*EDITABLE, "affected_metrics", "expected_impacts")},
                ),
            ),
        )
        if sent.ok:
            messages.success(request, "Saved. A material change after submission needs approval again.")
            return redirect("freeze:exception", pk=pk)
        status = sent.status
    context = {
        "form": form,
        "exception": exception,
        "hint": _hint(exception.component, exception.window, exception.change_starts_at),
    }
    return render(request, "freeze/exception_form.html", context, status=status)


def _hint(component: Component, window: FreezeWindow | None, moment: datetime | None) -> LevelHint:
    return exception_level_hint(component, moment or timezone.now(), window)


def _moment(value: str, time: str) -> datetime | None:
    try:
        return datetime.fromisoformat(f"{value}T{time or '00:00'}").replace(tzinfo=UTC)
    except ValueError:
        return None


@require_GET
def exception_level(request: HttpRequest) -> HttpResponse:
    """The form's level hint (an htmx fragment): the level the exception will meet for the component
    and window chosen, at the change start typed (now until one is)."""
    component = Component.objects.filter(key=request.GET.get("component", "")).first()
    window_id = request.GET.get("window", "")
    window = _readable_windows(request).filter(pk=window_id).first() if window_id.isdigit() else None
    moment = _moment(request.GET.get("change_starts_at_0", ""), request.GET.get("change_starts_at_1", ""))
    hint = _hint(component, window, moment) if component is not None else None
    return render(request, "freeze/_level_hint.html", {"hint": hint})


@require_GET
def queues(request: HttpRequest) -> HttpResponse:
    user = acting_user(request)
    readable = policies.exceptions_readable(user)
    mine = selectors.exceptions_list().filter(readable, requester=user)
    awaiting = selectors.exceptions_awaiting(user).filter(readable)
    return render(request, "freeze/queues.html", {"mine": mine, "awaiting": awaiting})


def _exception_context(request: HttpRequest, pk: int, form: DecisionForm | None = None) -> dict[str, Any]:
    exception = _exception_or_404(request, pk)
    approvers = exception_approvers(exception)
    now = timezone.now()
    # CI's answer when the change is due to run: at its start while that is ahead, else now.
    ci_at = exception.change_starts_at if exception.change_starts_at > now else now
    return {
        "ci": ci_panel(request, exception.component, at=ci_at, now=now),
        "exception": exception,
        "history": transitions_for(exception).order_by("-at", "-id"),
        "actions": exception_allowed_actions(acting_user(request), exception),
        "approvers": approvers,
        "needs": approval_needs(exception, approvers),
        "progress": approval_progress(exception),
        "authors": sorted(exception.authors.all(), key=lambda u: u.username),
        "impacts": exception_impacts(exception),
        "form": form or DecisionForm(),
    }


@require_GET
def exception_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return render(request, "freeze/exception_detail.html", _exception_context(request, pk))


@require_POST
def exception_act(request: HtmxHttpRequest, pk: int, action: str) -> HttpResponse:
    if action not in ACT_ACTIONS:
        raise Http404(f"No action '{action}'.")
    exception = _exception_or_404(request, pk)
    exception_allowed_actions(acting_user(request), exception).require(action)
    form = DecisionForm(request.POST)
    sent = form_submit(
        form,
        lambda data: services.exception_act(
            actor=acting_user(request), exception=exception, action=action, text=data["comment"]
        ),
        fallback_field="comment",
    )
    if sent.ok:
        messages.success(request, DONE[action])
        if not request.htmx:
            return redirect("freeze:exception", pk=pk)
        return render(request, "freeze/_exception_body.html", _exception_context(request, pk, None))
    # Bad input or someone acted first: show why and keep the comment typed.
    template = "freeze/_exception_body.html" if request.htmx else "freeze/exception_detail.html"
    return render(request, template, _exception_context(request, pk, form), status=sent.status)
