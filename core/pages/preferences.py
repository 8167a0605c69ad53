"""My notification preferences: per kind of notice, in-app only, email, or the daily digest."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from core.models import NotificationPreference
from core.notification_kinds import Kind
from core.pages.form_submit import form_submit
from core.pages.preferences_forms import PreferencesForm
from core.policies import webhook_scopes
from core.programs import program_choices
from core.roles import acting_user
from core.services.preferences import notification_preferences_of, notification_preferences_set


def _saved(changed: dict[str, tuple[str, str]]) -> str:
    if not changed:
        return "Nothing changed: your preferences were already these."
    labels = dict(NotificationPreference.Channel.choices)
    kinds = dict(Kind.choices)
    said = "; ".join(f"{kinds[kind]}: {labels[new].lower()}" for kind, (_, new) in sorted(changed.items()))
    return f"Saved. {said}."


@require_http_methods(["GET", "POST"])
def notification_preferences(request: HttpRequest) -> HttpResponse:
    """Every signed-in person has preferences of their own, so everyone sees the form."""
    user = acting_user(request)
    form = PreferencesForm(request.POST or None, initial=notification_preferences_of(user))
    status = 200
    if request.method == "POST":
        sent = form_submit(form, lambda data: notification_preferences_set(actor=user, choices=data))
        if sent.ok:
            messages.success(request, _saved(sent.value))
            return redirect("notification-preferences")
        status = sent.status
    context = {
        "form": form,
        "digest_hour": settings.NOTIFICATION_DIGEST_HOUR,
        "may_manage_webhooks": bool(webhook_scopes(user, (key for key, _ in program_choices()))),
    }
    return render(request, "core/notification_preferences.html", context, status=status)
