"""The home page: "My work", what waits for the signed-in person (work.selectors.work), and whether the background
worker and beat are alive (core.heartbeat)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.heartbeat import heartbeat_status
from core.roles import acting_user
from program import policies
from work.selectors import my_work


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    # Pages are for signed-in users only (PageLoginRequiredMiddleware).
    context = {
        "work": my_work(acting_user(request)),
        "may_decide_gates": policies.leads_any_program(request.user),
        "background": heartbeat_status(),
    }
    return render(request, "work/home.html", context)
