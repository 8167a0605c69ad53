"""Webhook endpoints on a page: program leads manage their program's, platform admins all of them
(core.policies.may_manage_webhooks). The signing secret shows once, on the answer to the creation."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import ApplicationError
from core.models import WebhookEndpoint
from core.pages.form_submit import form_submit
from core.pages.webhooks_forms import WebhookForm
from core.policies import (
    MSG_WEBHOOKS,
    may_manage_webhooks,
    webhook_endpoint_visible,
    webhook_scope_check,
    webhook_scopes,
)
from core.programs import program_choices
from core.roles import acting_user
from core.services import webhooks


def _programs(user: User, also: str | None = None) -> list[tuple[str, str]]:
    """(key, name) of the scopes `user` may manage, "" first; refuses (403) one who may manage none.
    `also` keeps an endpoint's own scope in the list when its program no longer exists."""
    names = dict(program_choices())
    scopes = webhook_scopes(user, names)
    if not scopes:
        raise PermissionDenied(MSG_WEBHOOKS)
    if also is not None and also not in scopes:
        scopes.append(also)
    return [(key, names.get(key, key)) for key in scopes]


def _listed(user: User) -> list[WebhookEndpoint]:
    # Few rows (a handful per program): filtered here by the one rule rather than restated in SQL.
    endpoints = WebhookEndpoint.objects.order_by("program_key", "name", "pk")
    return [endpoint for endpoint in endpoints if may_manage_webhooks(user, endpoint.program_key)]


@never_cache  # the answer to a creation shows the new signing secret
@require_http_methods(["GET", "POST"])
def webhook_list(request: HttpRequest) -> HttpResponse:
    user = acting_user(request)
    programs = _programs(user)
    form = WebhookForm(request.POST or None, programs=programs)
    status, created = 200, None
    if request.method == "POST":
        sent = form_submit(form, lambda data: webhooks.webhook_endpoint_create(actor=user, **data))
        if sent.ok:
            # Answered here, not after a redirect: the secret is shown in this answer and kept nowhere else.
            created = sent.value
            form = WebhookForm(programs=programs)
        else:
            status = sent.status
    context = {
        "form": form,
        "endpoints": _listed(user),
        "program_names": dict(programs),
        "created": created,
    }
    return render(request, "core/webhooks.html", context, status=status)


@require_http_methods(["GET", "POST"])
def webhook_edit(request: HttpRequest, pk: int) -> HttpResponse:
    user = acting_user(request)
    endpoint = get_object_or_404(WebhookEndpoint, pk=pk)
    webhook_endpoint_visible(user, endpoint.program_key)
    webhook_scope_check(user, endpoint.program_key)
    programs = _programs(user, also=endpoint.program_key)
    initial = {
        "name": endpoint.name,
        "url": endpoint.url,
        "program_key": endpoint.program_key,
        "events": endpoint.events,
        "format": endpoint.format,
    }
    form = WebhookForm(request.POST or None, initial=initial, programs=programs)
    status = 200
    if request.method == "POST":
        sent = form_submit(
            form,
            lambda data: webhooks.webhook_endpoint_update(
                actor=user, endpoint=endpoint, changes=cast(webhooks.WebhookEndpointChanges, data)
            ),
        )
        if sent.ok:
            changed = sent.value
            if changed:
                messages.success(
                    request, f"Saved “{form.cleaned_data['name']}”: {', '.join(changed)} changed."
                )
            else:
                messages.info(request, f"Nothing changed on “{endpoint.name}”.")
            return redirect("webhooks")
        status = sent.status
    return render(request, "core/webhook_edit.html", {"form": form, "endpoint": endpoint}, status=status)


def _button(request: HttpRequest, pk: int, service: Callable[..., object], done: str) -> HttpResponse:
    """A button on the list: done, or refused (409: deactivated already) with a message there."""
    user = acting_user(request)
    endpoint = get_object_or_404(WebhookEndpoint, pk=pk)
    webhook_endpoint_visible(user, endpoint.program_key)
    webhook_scope_check(user, endpoint.program_key)
    try:
        service(actor=user, endpoint=endpoint)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, done.format(name=endpoint.name))
    return redirect("webhooks")


@require_POST
def webhook_deactivate(request: HttpRequest, pk: int) -> HttpResponse:
    return _button(
        request, pk, webhooks.webhook_endpoint_deactivate, "Deactivated “{name}”: it receives no new notices."
    )


@require_POST
def webhook_reactivate(request: HttpRequest, pk: int) -> HttpResponse:
    return _button(request, pk, webhooks.webhook_endpoint_reactivate, "Reactivated “{name}”.")


@require_POST
def webhook_delete(request: HttpRequest, pk: int) -> HttpResponse:
    return _button(request, pk, webhooks.webhook_endpoint_delete, "Deleted “{name}” and its deliveries.")
