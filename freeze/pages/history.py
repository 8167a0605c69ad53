"""The whole history of a freeze window, a page at a time (the freeze page shows the newest few)."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from core.pages.htmx import HtmxHttpRequest
from freeze import policies
from freeze.history import window_history
from freeze.models import FreezeWindow


@require_GET
def window_history_page(request: HtmxHttpRequest, window_id: int) -> HttpResponse:
    window = get_object_or_404(FreezeWindow.objects.select_related("program"), pk=window_id)
    if not policies.may_read_window(request.user, window):
        raise Http404("No such freeze window.")
    try:
        number = int(request.GET.get("page", "1"))
    except ValueError:
        number = 1
    page = window_history(window, number)
    template = "freeze/_window_history_rows.html" if request.htmx else "freeze/window_history.html"
    return render(request, template, {"window": window, "history": page})
