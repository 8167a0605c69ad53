from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from core.errors import ApplicationError
from core.forms import add_service_error
from core.pages import role_required
from core.roles import PROGRAM_LEADS, has_role
from freeze import selectors, services
from freeze.forms import levels_form_class
from freeze.models import FreezeWindow


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
