"""The admin reads everything and writes nothing past a service (issue 9, finding 2).

One test walks every ModelAdmin in `admin.site._registry` on the demo data and probes it over real
HTTP as a superuser: the changelist, a search and a change page render; delete is refused unless the
model is in DELETABLE; add and change are refused (403, and a forced POST writes nothing) unless the
model is in one of the two commented allow-lists.
A model registered later fails here until it is classified.
"""

from __future__ import annotations

import io
import json
from datetime import date, datetime

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db import models
from django.test import RequestFactory
from django.utils import timezone

from core.admin_base import ServiceSaveAdmin
from core.models import Heartbeat, WebhookEndpoint
from core.roles import PROGRAM_LEADS

# Models with no rules and no service, edited as Django's own admin does.
PLAIN = {
    "auth.User",  # Django's users; roles are their groups (core.roles).
    "auth.Group",  # the roles and owner teams themselves.
    "metrics.System",  # reference data the API edits as plain CRUD too; delete is an action
    "metrics.Workload",  # that calls reference_delete.
}
# Models whose admin form saves through their service (a ServiceSaveAdmin): a refusal is a form error.
THROUGH_SERVICE = {
    "metrics.MetricDefinition",  # definition_update: wording on any version, meaning on drafts only.
    "freeze.Component",  # component_upsert (program leads).
    "incidents.Incident",  # incident_file / incident_update (framework engineers, program leads).
    "metrics.PullSource",  # pull_source_create / pull_source_update (metric owners).
    "incidents.AlertRoute",  # alert_route_create / alert_route_update (framework engineers, program leads).
}
# Deleting stays possible for these (django-axes: deleting a login record lifts a lockout).
DELETABLE = {
    "auth.User",
    "auth.Group",
    "axes.AccessAttempt",
    "axes.AccessLog",
    "axes.AccessFailureLog",
}


def _url(model, suffix: str = "") -> str:
    return f"/admin/{model._meta.app_label}/{model._meta.model_name}/{suffix}"


def _row(model, obj) -> dict:
    return model._default_manager.filter(pk=obj.pk).values().get()


def _forced_post_data(obj) -> dict:
    """Every concrete field of `obj` as form data, text fields altered: what a hand-made POST sends."""
    data = {}
    for field in obj._meta.concrete_fields:
        if field.primary_key and field.auto_created:
            continue
        value = field.value_from_object(obj)
        if value is None:
            continue
        if isinstance(value, datetime):
            local = timezone.localtime(value)
            data[f"{field.name}_0"], data[f"{field.name}_1"] = local.date(), local.time()
            value = local.isoformat()
        elif isinstance(value, date):
            value = value.isoformat()
        elif isinstance(field, models.JSONField):
            value = json.dumps(value)
        elif isinstance(value, list):
            value = ",".join(map(str, value))
        elif isinstance(value, bool):
            value = "on" if value else ""
        elif isinstance(field, models.CharField | models.TextField) and not field.choices:
            value = f"{value}-forced"
        data[field.name] = value
    return data


def _demo_superuser() -> User:
    call_command("load_demo", stdout=io.StringIO())
    WebhookEndpoint.objects.create(name="chat", url="https://chat.example.com/hook", secret="whsec_eA==")
    Heartbeat.objects.create(name="background", at=timezone.now(), worker="celery@box")
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    login = {"user_agent": "ua", "ip_address": "10.0.0.1", "username": "x", "http_accept": "*/*"}
    AccessAttempt.objects.create(
        **login, path_info="/login/", get_data="", post_data="", failures_since_start=1
    )
    AccessLog.objects.create(**login, path_info="/login/")
    AccessFailureLog.objects.create(**login, path_info="/login/", locked_out=False)
    return User.objects.get(username="admin")


@pytest.mark.django_db
def test_no_model_in_the_admin_is_written_past_its_service(client):
    superuser = _demo_superuser()
    client.force_login(superuser)
    request = RequestFactory().get("/admin/")
    request.user = superuser
    problems = []

    for model, model_admin in admin.site._registry.items():
        label = model._meta.label
        obj = model._default_manager.order_by("pk").first()
        assert obj is not None, f"{label}: the probe needs a row"
        pages = (_url(model), _url(model, "?q=a"), _url(model, f"{obj.pk}/change/"))
        problems += [
            f"{label}: GET {page} → {s}" for page in pages if (s := client.get(page).status_code) != 200
        ]

        if label not in DELETABLE:
            deleting = {
                "POST delete": client.post(_url(model, f"{obj.pk}/delete/"), {"post": "yes"}).status_code,
            }
            bulk = {"action": "delete_selected", "_selected_action": [obj.pk], "post": "yes"}
            client.post(_url(model), bulk)
            problems += [f"{label}: {what} → {s}, not 403" for what, s in deleting.items() if s != 403]
            if not model._default_manager.filter(pk=obj.pk).exists():
                problems.append(f"{label}: deleted past its service")
                continue

        if label in PLAIN:
            continue
        if label in THROUGH_SERVICE:
            if not isinstance(model_admin, ServiceSaveAdmin):
                problems.append(f"{label}: allowed to save, but not through a service")
            continue

        # Everything else is browse-only: no add, no change, no inline writes.
        count, before = model._default_manager.count(), _row(model, obj)
        forced = _forced_post_data(obj)
        refused = {
            "GET add": client.get(_url(model, "add/")).status_code,
            "POST add": client.post(_url(model, "add/"), forced).status_code,
            "POST change": client.post(_url(model, f"{obj.pk}/change/"), forced).status_code,
            "POST save-as-new": client.post(
                _url(model, f"{obj.pk}/change/"), {**forced, "_saveasnew": "1"}
            ).status_code,
        }
        problems += [f"{label}: {what} → {s}, not 403" for what, s in refused.items() if s != 403]
        if model._default_manager.count() != count or _row(model, obj) != before:
            problems.append(f"{label}: a forced POST wrote")
        if b'name="_save"' in client.get(_url(model, f"{obj.pk}/change/")).content:
            problems.append(f"{label}: the change page offers a save button")
        for inline in model_admin.get_inline_instances(request, obj):
            if any(
                check(request, obj)
                for check in (
                    inline.has_add_permission,
                    inline.has_change_permission,
                    inline.has_delete_permission,
                )
            ):
                problems.append(f"{label}: inline {type(inline).__name__} writes")

    assert problems == []


@pytest.mark.django_db
def test_admin_gate_evaluate_action_uses_the_service(client):
    from program.models import Evaluation, Gate

    superuser = _demo_superuser()
    superuser.groups.add(Group.objects.get(name=PROGRAM_LEADS))  # whoever may evaluate, a lead may
    client.force_login(superuser)
    frontier = Gate.objects.get(phase__program__slug="frontier-rebuild", phase__kind="frontier", kind="exit")
    assert not Evaluation.objects.filter(gate=frontier).exists()
    response = client.post(
        "/admin/program/gate/", {"action": "evaluate", "_selected_action": [frontier.pk]}, follow=True
    )
    assert Evaluation.objects.filter(gate=frontier).exists()
    assert "Evaluated 1 gate(s)." in response.content.decode()
