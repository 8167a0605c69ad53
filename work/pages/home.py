"""The home page: "My work", what waits for the signed-in person (work.selectors.work), and whether the background
worker and beat are alive (core.heartbeat)."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.heartbeat import heartbeat_status
from core.roles import PROGRAM_LEADS, has_role
from work.selectors import my_work


@require_GET
def home(request):
    context = {
        "work": my_work(request.user),
        "may_decide_gates": has_role(request.user, PROGRAM_LEADS),
        "background": heartbeat_status(),
    }
    return render(request, "work/home.html", context)
