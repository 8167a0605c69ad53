from __future__ import annotations

from datetime import datetime

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from core.errors import ApplicationError
from core.pages.form_submit import form_submit
from core.roles import FRAMEWORK_ENGINEERS, acting_user, has_role
from freeze import policies, selectors, services
from freeze.history import CAPPED, window_history
from freeze.models import FreezeWindow
from freeze.pages.forms import levels_form_class


def _table_moment(window: FreezeWindow | None, now: datetime) -> datetime:
    """The moment the table shows: now, or when the chosen window (not in force now) starts."""
    if window is None or window.contains(now):
        return now
    return window.starts_at


@require_GET
def freeze_list(request: HttpRequest, window_id: int | None = None) -> HttpResponse:
    """One table: components by layer × the windows in force now (or when the chosen window is),
    with the chosen window's history below."""
    now = timezone.now()
    # A private program's windows are shown to its members and platform admins only.
    windows = list(
        FreezeWindow.objects.select_related("program")
        .filter(policies.windows_readable(request.user))
        .order_by("starts_at", "pk")
    )
    readable = {w.pk for w in windows}
    if window_id:
        window = next((w for w in windows if w.pk == window_id), None)
        if window is None:
            raise Http404("No such freeze window.")
    else:
        # The window in force now, else the next one coming (selectors.current_window), among those
        # this user may read.
        window = next((w for w in selectors.windows_at(now) if w.pk in readable), None) or next(
            (w for w in windows if w.starts_at > now), None
        )
    moment = _table_moment(window, now)
    can_file = has_role(request.user, FRAMEWORK_ENGINEERS)
    # Each column shows the span in force: a recurring window's occurrence, not its whole season.
    columns = []
    for span in selectors.in_force_at(moment):
        if span.window.pk not in readable:
            continue
        span.window.shown_span = (span.starts_at, span.ends_at)
        columns.append(span.window)
    if window is not None and window not in columns:
        window.shown_span = (window.starts_at, window.ends_at)
        columns.append(window)
    context = {
        "window": window,
        "now": now,
        "moment": moment,
        "in_force": window is not None and window.contains(now),
        "columns": columns,
        "layers": selectors.freeze_list(columns, now, policies.exceptions_readable(request.user)),
        "window_groups": _window_groups(windows, now),
        "upcoming": [w for w in windows if w.starts_at > now][:5],
        "history": window_history(window, size=CAPPED) if window else None,
        "can_edit": window is not None and policies.is_window_lead(request.user, window),
        # Each row's "request an exception", for those who may file one (the form's own guard).
        "can_file": can_file,
        "colspan": len(columns) + 3 + can_file,
    }
    return render(request, "freeze/freeze_list.html", context)


def _window_groups(windows: list[FreezeWindow], now: datetime) -> list[tuple[str, list[FreezeWindow]]]:
    """The window picker's groups: in force now, upcoming, ended."""
    groups: dict[str, list[FreezeWindow]] = {"In force now": [], "Upcoming": [], "Ended": []}
    for w in windows:
        key = "Upcoming" if w.starts_at > now else "Ended" if w.ends_at <= now else "In force now"
        groups[key].append(w)
    return [(name, items) for name, items in groups.items() if items]


def _levels_page(
    request: HttpRequest,
    window: FreezeWindow,
    form: forms.Form | None = None,
    import_error: str = "",
    status: int = 200,
) -> HttpResponse:
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


def _window_to_edit(request: HttpRequest, window_id: int) -> FreezeWindow:
    """The window whose levels the page sets, once the policy allows it (before any input is read)."""
    window = get_object_or_404(FreezeWindow.objects.select_related("program"), pk=window_id)
    if not policies.may_read_window(request.user, window):
        raise Http404("No such freeze window.")
    policies.require_window_lead(request.user, window, "set freeze levels")
    return window


def levels_edit(request: HttpRequest, window_id: int) -> HttpResponse:
    window = _window_to_edit(request, window_id)
    if request.method != "POST":
        return _levels_page(request, window)
    rows = selectors.window_levels(window)
    form = levels_form_class(rows, window.default_level)(request.POST)
    # The service writes only the rows whose level really changes.
    sent = form_submit(
        form,
        lambda data: services.freeze_levels_set(
            actor=acting_user(request),
            window=window,
            levels={key: level for key, level in data.items() if key != "reason"},
            reason=data["reason"],
        ),
    )
    if sent.ok:
        changed = sent.value
        messages.success(request, _changed_message(changed, window))
        return redirect("freeze:window", window_id=window.pk)
    return _levels_page(request, window, form=form, status=sent.status)


@require_POST
def levels_import(request: HttpRequest, window_id: int) -> HttpResponse:
    window = _window_to_edit(request, window_id)
    try:
        changed = services.freeze_levels_import(
            actor=acting_user(request), window=window, file=request.FILES.get("file")
        )
    except ApplicationError as exc:
        # Shown next to the file input, with the service's status (400 for a bad file).
        detail = "; ".join(e["message"] for e in exc.errors if e.get("field") != "file")
        return _levels_page(
            request, window, import_error=f"{exc.message} {detail}".strip(), status=exc.status
        )
    messages.success(request, f"Imported: {_changed_message(changed, window)}")
    return redirect("freeze:window", window_id=window.pk)
