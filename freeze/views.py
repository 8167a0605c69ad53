from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from core.audit import transitions_for
from core.forms import SERVICE_ERRORS, add_service_error, error_message
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS, has_role, in_team
from freeze import selectors, services
from freeze.forms import DecisionForm, ExceptionForm, levels_form_class
from freeze.models import FreezeException, FreezeWindow


def freeze_list(request, window_id: int | None = None):
    window = get_object_or_404(FreezeWindow, pk=window_id) if window_id else selectors.current_window()
    rows = selectors.freeze_list(window)
    layers: dict[str, list] = {}
    for row in rows:
        layers.setdefault(row["component"].get_layer_display(), []).append(row)
    context = {
        "window": window,
        "in_force": window is not None and window.contains(timezone.now()),
        "windows": FreezeWindow.objects.select_related("program"),
        "layers": layers.items(),
        "can_edit": has_role(request.user, PROGRAM_LEADS),
    }
    return render(request, "freeze/freeze_list.html", context)


def levels_edit(request, window_id: int):
    if not has_role(request.user, PROGRAM_LEADS):
        raise PermissionDenied("Only program leads set freeze levels.")
    window = get_object_or_404(FreezeWindow, pk=window_id)
    rows = selectors.freeze_list(window)
    form_class = levels_form_class([row["component"] for row in rows])
    form = form_class(request.POST or None, initial={row["component"].key: row["level"] for row in rows})
    if request.method == "POST" and form.is_valid():
        reason = form.cleaned_data.pop("reason")
        try:
            changed = services.freeze_levels_set(
                actor=request.user, window=window, levels=form.cleaned_data, reason=reason
            )
        except SERVICE_ERRORS as exc:
            messages.error(request, error_message(exc))
        else:
            messages.success(request, f"{changed} level(s) changed in '{window.name}'.")
            return redirect("freeze:window", window_id=window.pk)
    return render(request, "freeze/levels_edit.html", {"window": window, "form": form, "rows": rows})


@require_POST
def levels_import(request, window_id: int):
    window = get_object_or_404(FreezeWindow, pk=window_id)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a CSV or YAML file.")
        return redirect("freeze:levels", window_id=window.pk)
    fmt = "yaml" if upload.name.endswith((".yaml", ".yml")) else "csv"
    try:
        changed = services.freeze_levels_import(
            actor=request.user, window=window, text=upload.read().decode("utf-8-sig"), fmt=fmt
        )
    except SERVICE_ERRORS as exc:
        messages.error(request, error_message(exc))
    except UnicodeDecodeError:
        messages.error(request, "The file is not UTF-8.")
    else:
        messages.success(request, f"Imported: {changed} level(s) changed.")
    return redirect("freeze:levels", window_id=window.pk)


def exception_new(request):
    initial = {"component": request.GET.get("component")}
    form = ExceptionForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            exception = services.exception_create(requester=request.user, **form.cleaned_data)
        except SERVICE_ERRORS as exc:
            add_service_error(form, exc)
        else:
            messages.success(request, "Draft saved. Submit it when it is ready for review.")
            return redirect("freeze:exception", pk=exception.pk)
    return render(request, "freeze/exception_form.html", {"form": form})


EDITABLE = ("title", "change", "justification", "risk", "rollback_plan", "change_starts_at", "change_ends_at")


def exception_edit(request, pk: int):
    exception = get_object_or_404(FreezeException.objects.select_related("component", "window"), pk=pk)
    initial = {field: getattr(exception, field) for field in EDITABLE}
    form = ExceptionForm(
        request.POST or None,
        initial={**initial, "component": exception.component.key, "window": exception.window},
    )
    form.fields["component"].disabled = form.fields["window"].disabled = True
    if request.method == "POST" and form.is_valid():
        try:
            services.exception_edit(
                editor=request.user, exception=exception, changes={f: form.cleaned_data[f] for f in EDITABLE}
            )
        except SERVICE_ERRORS as exc:
            add_service_error(form, exc)
        else:
            messages.success(request, "Saved. A material change after submission needs approval again.")
            return redirect("freeze:exception", pk=pk)
    return render(request, "freeze/exception_form.html", {"form": form, "exception": exception})


def queues(request):
    mine = selectors.exceptions_list().filter(requester=request.user)
    awaiting = selectors.exceptions_awaiting(request.user)
    return render(request, "freeze/queues.html", {"mine": mine, "awaiting": awaiting})


def _actions(user, exception: FreezeException) -> dict[str, bool]:
    status = exception.effective_status
    is_party = exception.is_author(user)
    may_decide = not is_party and (
        has_role(user, PROGRAM_LEADS) or in_team(user, exception.component.owner_team)
    )
    already = any(a.approver_id == user.pk and a.dismissed_at is None for a in exception.approvals.all())
    return {
        "edit": status in ("draft", "submitted", "approved") and has_role(user, FRAMEWORK_ENGINEERS),
        "submit": status == "draft" and user.pk == exception.requester_id,
        "approve": status == "submitted" and may_decide and not already,
        "reject": status == "submitted" and may_decide and not already,
        "withdraw": status in ("draft", "submitted", "approved") and user.pk == exception.requester_id,
        "revoke": status == "approved" and has_role(user, PROGRAM_LEADS),
    }


def _exception_context(request, pk: int, form=None) -> dict:
    exception = get_object_or_404(
        FreezeException.objects.select_related(
            "component", "window__program", "requester", "last_editor"
        ).prefetch_related("approvals__approver"),
        pk=pk,
    )
    return {
        "exception": exception,
        "history": transitions_for(exception).order_by("-at", "-id"),
        "actions": _actions(request.user, exception),
        "form": form or DecisionForm(),
    }


def exception_detail(request, pk: int):
    return render(request, "freeze/exception_detail.html", _exception_context(request, pk))


ACTIONS = {
    "submit": lambda user, e, text: services.exception_submit(requester=user, exception=e),
    "approve": lambda user, e, text: services.exception_approve(approver=user, exception=e, comment=text),
    "reject": lambda user, e, text: services.exception_reject(approver=user, exception=e, reason=text),
    "withdraw": lambda user, e, text: services.exception_withdraw(requester=user, exception=e, reason=text),
    "revoke": lambda user, e, text: services.exception_revoke(lead=user, exception=e, reason=text),
}


DONE = {
    "submit": "Submitted: the approvers have been notified.",
    "approve": "Your approval is recorded.",
    "reject": "Rejected: the requester has been notified.",
    "withdraw": "Withdrawn.",
    "revoke": "Revoked: the change is no longer allowed.",
}


@require_POST
def exception_act(request, pk: int, action: str):
    if action not in ACTIONS:
        raise PermissionDenied("Unknown action.")
    exception = get_object_or_404(FreezeException, pk=pk)
    form = DecisionForm(request.POST)
    form.is_valid()
    try:
        ACTIONS[action](request.user, exception, form.cleaned_data.get("comment", ""))
    except SERVICE_ERRORS as exc:
        add_service_error(form, exc, fallback_field="comment")
    else:
        messages.success(request, DONE[action])
        form = None
    template = "freeze/_exception_body.html" if request.htmx else "freeze/exception_detail.html"
    return render(request, template, _exception_context(request, pk, form))
