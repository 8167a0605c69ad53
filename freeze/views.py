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
from freeze.history import CAPPED, window_history
from freeze.models import FreezeException, FreezeWindow
from freeze.services.exceptions import EDITABLE


def _table_moment(window: FreezeWindow | None, now):
    """The moment the table shows: now, or when the chosen window (not in force now) starts."""
    if window is None or window.contains(now):
        return now
    return window.starts_at


@require_GET
def freeze_list(request, window_id: int | None = None):
    """One table: components by layer × the windows in force now (or when the chosen window is),
    with the chosen window's history below."""
    now = timezone.now()
    windows = list(FreezeWindow.objects.select_related("program").order_by("starts_at", "pk"))
    if window_id:
        window = next((w for w in windows if w.pk == window_id), None)
        if window is None:
            raise Http404("No such freeze window.")
    else:
        window = selectors.current_window(now)
    moment = _table_moment(window, now)
    columns = selectors.windows_at(moment)
    if window is not None and window not in columns:
        columns.append(window)
    context = {
        "window": window,
        "now": now,
        "moment": moment,
        "in_force": window is not None and window.contains(now),
        "columns": columns,
        "layers": selectors.freeze_list(columns, now),
        "window_groups": _window_groups(windows, now),
        "upcoming": [w for w in windows if w.starts_at > now][:5],
        "history": window_history(window, size=CAPPED) if window else None,
        "can_edit": has_role(request.user, PROGRAM_LEADS),
    }
    return render(request, "freeze/freeze_list.html", context)


def _window_groups(windows: list[FreezeWindow], now) -> list[tuple[str, list[FreezeWindow]]]:
    """The window picker's groups: in force now, upcoming, ended."""
    groups = {"In force now": [], "Upcoming": [], "Ended": []}
    for w in windows:
        key = "Upcoming" if w.starts_at > now else "Ended" if w.ends_at <= now else "In force now"
        groups[key].append(w)
    return [(name, items) for name, items in groups.items() if items]


def _levels_page(request, window: FreezeWindow, form=None, import_error: str = "", status: int = 200):
    rows = selectors.window_levels(window)
    if form is None:
        form = levels_form_class(rows, window.default_level)(
            initial={r["component"].key: r["level"] for r in rows}
        )
    context = {"window": window, "form": form, "rows": rows, "import_error": import_error}
    return render(request, "freeze/levels_edit.html", context, status=status)


def _changed_message(changed: int, window: FreezeWindow) -> str:
    if changed == 0:
        return f"No level changed in '{window.name}': every level was already as chosen."
    return f"{changed} level{'s' if changed != 1 else ''} changed in '{window.name}'."


@role_required(PROGRAM_LEADS, action="set freeze levels")
def levels_edit(request, window_id: int):
    window = get_object_or_404(FreezeWindow, pk=window_id)
    if request.method != "POST":
        return _levels_page(request, window)
    rows = selectors.window_levels(window)
    form = levels_form_class(rows, window.default_level)(request.POST)
    status = 400
    if form.is_valid():
        reason = form.cleaned_data.pop("reason")
        try:
            # The service writes only the rows whose level really changes.
            changed = services.freeze_levels_set(
                actor=request.user, window=window, levels=form.cleaned_data, reason=reason
            )
        except ApplicationError as exc:
            status = add_service_error(form, exc)
        else:
            messages.success(request, _changed_message(changed, window))
            return redirect("freeze:window", window_id=window.pk)
    return _levels_page(request, window, form=form, status=status)


@require_POST
@role_required(PROGRAM_LEADS, action="set freeze levels")
def levels_import(request, window_id: int):
    window = get_object_or_404(FreezeWindow, pk=window_id)
    try:
        changed = services.freeze_levels_import(
            actor=request.user, window=window, file=request.FILES.get("file")
        )
    except ApplicationError as exc:
        # Shown next to the file input, with the service's status (400 for a bad file).
        detail = "; ".join(e["message"] for e in exc.errors if e.get("field") != "file")
        return _levels_page(
            request, window, import_error=f"{exc.message} {detail}".strip(), status=exc.status
        )
    messages.success(request, f"Imported: {_changed_message(changed, window)}")
    return redirect("freeze:window", window_id=window.pk)


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
