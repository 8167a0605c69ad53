"""Break-glass override pages: the panel on the freeze list, opening one, reviewing one (leads)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone

from core.pages.form_submit import form_submit
from core.roles import acting_user
from freeze import policies, services
from freeze.models import FreezeOverride
from freeze.pages.overrides_forms import OverrideForm, ReviewForm


def _overrides() -> QuerySet[FreezeOverride]:
    return FreezeOverride.objects.select_related("component", "opened_by", "reviewed_by")


def overrides_panel_context(request: HttpRequest) -> dict[str, Any]:
    """In force now and awaiting review (oldest first): two queries, plus the form's components."""
    now = timezone.now()
    user = request.user
    awaiting = list(_overrides().filter(reviewed_at__isnull=True).order_by("starts_at", "pk"))
    for override in awaiting:
        override.may_review = policies.may_review_override(user, override)
    return {
        "in_force": list(_overrides().filter(starts_at__lte=now, ends_at__gt=now).order_by("ends_at", "pk")),
        "awaiting": awaiting,
        "can_open": policies.may_open_override(user),
        "open_form": OverrideForm(initial={"ends_at": OverrideForm.default_end()}),
        "review_form": ReviewForm(),
        "request": request,
    }


def _back() -> str:
    return reverse("freeze:list") + "#overrides"


def override_new(request: HttpRequest) -> HttpResponse:
    policies.require_open_override(request.user)
    form = OverrideForm(request.POST or None, initial={"ends_at": OverrideForm.default_end()})
    status = 200
    if request.method == "POST":
        sent = form_submit(
            form,
            lambda data: services.override_open(actor=acting_user(request), **data),
            fallback_field="ends_at",
        )
        if sent.ok:
            override = sent.value
            messages.success(
                request,
                f"Override #{override.pk} opened: {override.component.key} may change until "
                f"{override.ends_at:%Y-%m-%d %H:%M} UTC. The owner team and the leads were told; "
                "another lead reviews it within 72 h.",
            )
            return redirect(_back())
        status = sent.status
    return render(request, "freeze/override_form.html", {"form": form}, status=status)


def override_review(request: HttpRequest, pk: int) -> HttpResponse:
    policies.require_open_override(request.user)  # who may review any, before the 404
    override = get_object_or_404(_overrides(), pk=pk)
    # The opener: styled 403.
    services.override_reviewer_check(actor=acting_user(request), override=override)
    form = ReviewForm(request.POST or None)
    status = 200
    if request.method == "POST":
        sent = form_submit(
            form,
            lambda data: services.override_review(
                actor=acting_user(request), override=override, note=data["review_note"]
            ),
            fallback_field="review_note",
        )
        if sent.ok:
            messages.success(request, f"Review of override #{override.pk} recorded.")
            return redirect(_back())
        status = sent.status
    context = {"override": override, "form": form}
    return render(request, "freeze/override_review.html", context, status=status)
