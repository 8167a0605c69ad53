from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from core.audit import transitions_for
from core.errors import ApplicationError
from core.forms import add_service_error
from core.pages import role_required
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS, has_role
from freeze import selectors, services
from freeze.forms import DecisionForm, ExceptionForm, levels_form_class
from freeze.models import FreezeException, FreezeWindow
from freeze.services.exceptions import EDITABLE


@require_GET
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


@role_required(PROGRAM_LEADS, action="set freeze levels")
def levels_edit(request, window_id: int):
    window = get_object_or_404(FreezeWindow, pk=window_id)
    rows = selectors.freeze_list(window)
    form_class = levels_form_class([row["component"] for row in rows])
    form = form_class(request.POST or None, initial={row["component"].key: row["level"] for row in rows})
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            reason = form.cleaned_data.pop("reason")
            try:
                changed = services.freeze_levels_set(
                    actor=request.user, window=window, levels=form.cleaned_data, reason=reason
                )
            except ApplicationError as exc:
                status = add_service_error(form, exc)
            else:
                messages.success(request, f"{changed} level(s) changed in '{window.name}'.")
                return redirect("freeze:window", window_id=window.pk)
    context = {"window": window, "form": form, "rows": rows}
    return render(request, "freeze/levels_edit.html", context, status=status)


@require_POST
@role_required(PROGRAM_LEADS, action="set freeze levels")
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
    except ApplicationError as exc:
        messages.error(request, exc.message)
    except UnicodeDecodeError:
        messages.error(request, "The file is not UTF-8.")
    else:
        messages.success(request, f"Imported: {changed} level(s) changed.")
    return redirect("freeze:levels", window_id=window.pk)


@role_required(FRAMEWORK_ENGINEERS, action="file freeze exceptions")
def exception_new(request):
    initial = {"component": request.GET.get("component")}
    form = ExceptionForm(request.POST or None, initial=initial)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                exception = services.exception_create(requester=request.user, **form.cleaned_data)
            except ApplicationError as exc:
                status = add_service_error(form, exc)
            else:
                messages.success(request, "Draft saved. Submit it when it is ready for review.")
                return redirect("freeze:exception", pk=exception.pk)
    return render(request, "freeze/exception_form.html", {"form": form}, status=status)


def exception_edit(request, pk: int):
    exception = get_object_or_404(FreezeException.objects.select_related("component", "window"), pk=pk)
    if refusal := _refusal(request.user, exception, "edit"):
        raise PermissionDenied(refusal)
    if not _actions(request.user, exception)["edit"]:
        messages.error(request, f"A {exception.effective_status} exception cannot be edited.")
        return redirect("freeze:exception", pk=pk)
    initial = {field: getattr(exception, field) for field in EDITABLE}
    form = ExceptionForm(
        request.POST or None,
        initial={**initial, "component": exception.component.key, "window": exception.window},
    )
    form.fields["component"].disabled = form.fields["window"].disabled = True
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            changes = {f: form.cleaned_data[f] for f in EDITABLE}
            try:
                services.exception_edit(editor=request.user, exception=exception, changes=changes)
            except ApplicationError as exc:
                status = add_service_error(form, exc)
            else:
                messages.success(request, "Saved. A material change after submission needs approval again.")
                return redirect("freeze:exception", pk=pk)
    context = {"form": form, "exception": exception}
    return render(request, "freeze/exception_form.html", context, status=status)


@require_GET
def queues(request):
    mine = selectors.exceptions_list().filter(requester=request.user)
    awaiting = selectors.exceptions_awaiting(request.user)
    return render(request, "freeze/queues.html", {"mine": mine, "awaiting": awaiting})


EXCEPTION_ACTIONS = ("edit", "submit", "approve", "reject", "withdraw", "revoke")


def _refusal(user, exception: FreezeException, action: str) -> str | None:
    """Why this person may not take `action` on the exception at all (the service's own rule), or None."""
    try:
        services.exception_actor_check(user=user, exception=exception, action=action)
    except PermissionDenied as exc:
        return str(exc)
    return None


def _may(user, exception: FreezeException) -> dict[str, bool]:
    """Who may take each action at all, whatever the exception's status (the services decide that)."""
    return {action: _refusal(user, exception, action) is None for action in EXCEPTION_ACTIONS}


def _actions(user, exception: FreezeException) -> dict[str, bool]:
    """The buttons to show: what this person may do to the exception as it stands now."""
    status = exception.effective_status
    may = _may(user, exception)
    already = any(a.approver_id == user.pk and a.dismissed_at is None for a in exception.approvals.all())
    return {
        "edit": may["edit"] and status in ("draft", "submitted", "approved"),
        "submit": may["submit"] and status == "draft",
        "approve": may["approve"] and status == "submitted" and not already,
        "reject": may["reject"] and status == "submitted" and not already,
        "withdraw": may["withdraw"] and status in ("draft", "submitted", "approved"),
        "revoke": may["revoke"] and status == "approved",
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


@require_GET
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
        raise Http404(f"No action '{action}'.")
    exception = get_object_or_404(FreezeException.objects.select_related("component"), pk=pk)
    if refusal := _refusal(request.user, exception, action):
        raise PermissionDenied(refusal)
    form = DecisionForm(request.POST)
    form.is_valid()
    try:
        ACTIONS[action](request.user, exception, form.cleaned_data.get("comment", ""))
    except ApplicationError as exc:
        # Bad input or someone acted first: show why and keep the comment typed.
        status = add_service_error(form, exc, fallback_field="comment")
    else:
        messages.success(request, DONE[action])
        if not request.htmx:
            return redirect("freeze:exception", pk=pk)
        form, status = None, 200
    template = "freeze/_exception_body.html" if request.htmx else "freeze/exception_detail.html"
    return render(request, template, _exception_context(request, pk, form), status=status)
