"""The home page: "My work", what waits for the signed-in person (core.work)."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.roles import PROGRAM_LEADS, has_role
from core.work import my_work


@require_GET
def home(request):
    context = {"work": my_work(request.user), "may_decide_gates": has_role(request.user, PROGRAM_LEADS)}
    return render(request, "core/home.html", context)
