"""Pages that change the registry: register a metric, make a new version, activate or deprecate one.

Metric owners only (core.pages.guards.role_required: anyone else gets the styled 403 for GET and POST alike,
so they never see these forms). Each page calls the same service as the API."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html

from core.errors import ApplicationError
from core.pages.form_submit import form_submit
from core.pages.guards import role_required
from core.roles import METRIC_OWNERS, acting_user
from metrics import services
from metrics.boundary import definition_changes
from metrics.dependents import stale_on_supersede
from metrics.models import MetricDefinition, Observation
from metrics.pages.definitions_forms import DefinitionFieldsForm, RegisterForm, initial_from, team_of
from metrics.pages.ingest import may_ingest
from metrics.services.definitions import DefinitionFields

Status = MetricDefinition.Status


class ReasonForm(forms.Form):
    reason = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why — kept in the metric's history.",
    )


def _detail(definition: MetricDefinition) -> HttpResponseRedirect:
    return redirect(reverse("metrics:detail", kwargs={"key": definition.ref}))


def _version_or_404(key: str, version: int) -> MetricDefinition:
    definition = MetricDefinition.objects.filter(key=key, version=version).first()
    if definition is None:
        raise Http404(f"No metric version '{key}@{version}'.")
    return definition


def _active(key: str) -> MetricDefinition | None:
    return MetricDefinition.objects.filter(key=key, status=Status.ACTIVE).first()


@role_required(METRIC_OWNERS, action="register metric definitions")
def definition_register_page(request: HttpRequest) -> HttpResponse:
    form = RegisterForm(request.POST or None, initial={"owner_team": team_of(request.user)})
    status = 200
    if request.method == "POST":
        sent = form_submit(
            form,
            lambda _: services.definition_register(actor=acting_user(request), data=form.definition_data()),
        )
        if sent.ok:
            definition = sent.value
            messages.success(request, _registered_message(request, definition))
            return _detail(definition)
        status = sent.status
    return render(request, "metrics/definition_register.html", {"form": form}, status=status)


def _registered_message(request: HttpRequest, definition: MetricDefinition) -> str:
    """Where to go next: the ingest page, when this user may push observations."""
    if not may_ingest(request.user):
        return (
            f"Registered {definition.ref} as a draft. An ingest client sends its observations as "
            f"'{definition.ref}'; then activate it."
        )
    return format_html(
        'Registered {} as a draft. <a href="{}">Upload observations</a> to try it, then activate it.',
        definition.ref,
        reverse("metrics:ingest", kwargs={"key": definition.ref}),
    )


def _digest(latest: MetricDefinition, changes: DefinitionFields) -> str:
    """What was previewed: confirming is accepted only for exactly these values on this version."""
    text = json.dumps([latest.ref, changes], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _dry_run(actor: User, key: str, changes: DefinitionFields) -> MetricDefinition:
    """The version the service would create, with every one of its checks, written nowhere."""
    with transaction.atomic():
        new = services.definition_version_create(actor=actor, key=key, changes=changes)
        transaction.set_rollback(True)
    return new


@role_required(METRIC_OWNERS, action="create metric versions")
def version_new_page(request: HttpRequest, key: str) -> HttpResponse:
    """Edit the latest version's fields → preview (what changed, which gates go stale) → confirm."""
    latest = MetricDefinition.objects.filter(key=key).order_by("-version").first()
    if latest is None:
        raise Http404(f"No metric '{key}'.")
    form = DefinitionFieldsForm(request.POST or None, initial=initial_from(latest))
    active = _active(key)
    context: dict[str, Any] = {
        "latest": latest,
        "active": active,
        "form": form,
        "next_ref": f"{key}@{latest.version + 1}",
    }
    status = 200
    if request.method == "POST":
        confirmed = request.POST.get("confirm", "")

        def create_or_preview(_cleaned: dict[str, Any]) -> tuple[bool, MetricDefinition, str]:
            """(created, the version, the digest of what was previewed) — one service, either way."""
            changes = form.definition_data()
            digest = _digest(latest, changes)
            if confirmed == digest:
                return (
                    True,
                    services.definition_version_create(actor=acting_user(request), key=key, changes=changes),
                    digest,
                )
            return False, _dry_run(acting_user(request), key, changes), digest

        sent = form_submit(form, create_or_preview)
        status = sent.status
        if sent.ok:
            created, version, digest = sent.value
            if created:
                messages.success(
                    request,
                    f"Created {version.ref} as a draft. '{key}' still means "
                    f"{active.ref if active else 'no version'} until you activate it.",
                )
                return _detail(version)
            if confirmed:
                messages.warning(request, "The fields changed after the preview: check the changes again.")
            context.update(
                changes=definition_changes(latest, version),
                stale=stale_on_supersede(active),
                digest=digest,
            )
    return render(request, "metrics/version_new.html", context, status=status)


@role_required(METRIC_OWNERS, action="activate metric definitions")
def version_activate_page(request: HttpRequest, key: str, version: int) -> HttpResponse:
    """Asks first. Activating a version without observations empties the comparison page (the key
    moves to a version with no data), so that takes an explicit tick of `confirm_empty`."""
    definition = _version_or_404(key, version)
    active = _active(key)
    stale = stale_on_supersede(active) if active and active.pk != definition.pk else []
    empty = (
        definition.status == Status.DRAFT and not Observation.objects.filter(definition=definition).exists()
    )
    refused = ""
    if request.method == "POST":
        if empty and not request.POST.get("confirm_empty"):
            refused = (
                f"{definition.ref} has no observations yet: tick the box to activate it anyway, "
                "or push its data first."
            )
        else:
            try:
                services.definition_activate(actor=acting_user(request), definition=definition)
            except ApplicationError as exc:
                messages.error(request, exc.message)
            else:
                note = f" {active.ref} is deprecated." if active else ""
                if stale and active:
                    note += f" {len(stale)} gate(s) pinning {active.ref} are marked stale."
                if empty:
                    note += " It has no observations yet: the comparison page is empty until they arrive."
                messages.success(request, f"{definition.ref} is now the active version of '{key}'.{note}")
            return _detail(definition)
    context = {
        "definition": definition,
        "active": active,
        "changes": definition_changes(active, definition) if active and active.pk != definition.pk else [],
        "stale": stale,
        "action": "activate",
        "empty": empty,
        "refused": refused,
    }
    return render(request, "metrics/version_confirm.html", context, status=400 if refused else 200)


@role_required(METRIC_OWNERS, action="deprecate metric definitions")
def version_deprecate_page(request: HttpRequest, key: str, version: int) -> HttpResponse:
    definition = _version_or_404(key, version)
    form = ReasonForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        if not form.is_valid():
            context = {"definition": definition, "form": form, "action": "deprecate"}
            return render(request, "metrics/version_confirm.html", context, status=400)
        try:
            services.definition_deprecate(
                actor=acting_user(request), definition=definition, reason=form.cleaned_data["reason"]
            )
        except ApplicationError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(
                request,
                f"{definition.ref} is deprecated; '{key}' has no active version until one is activated.",
            )
        return _detail(definition)
    context = {
        "definition": definition,
        "form": form,
        "action": "deprecate",
        # Deprecating marks nothing stale, but these gates go on judging a version nobody measures.
        "pinned": stale_on_supersede(definition),
    }
    return render(request, "metrics/version_confirm.html", context)
