"""The alert routes page: the routes Alertmanager's alerts are matched against, in order, and the
firing alerts no route matched yet (they open no incident until one does)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from core.pages.form_submit import form_submit
from core.pages.guards import role_required
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS, acting_user, has_role
from incidents.models import AlertRoute, UnroutedAlert
from incidents.pages.alert_routes_forms import AlertRouteForm, matchers_text
from incidents.services import alerts

WRITERS = (FRAMEWORK_ENGINEERS, PROGRAM_LEADS)
UNROUTED_SHOWN = 50


def _may_write(user: User | AnonymousUser) -> bool:
    return any(has_role(user, role) for role in WRITERS)


def _page(
    request: HttpRequest,
    form: AlertRouteForm | None = None,
    editing: tuple[int, AlertRouteForm] | None = None,
    status: int = 200,
) -> HttpResponse:
    routes = list(AlertRoute.objects.select_related("system", "component", "workload", "bug_class"))
    unrouted = list(UnroutedAlert.objects.all()[:UNROUTED_SHOWN])
    edit_pk = editing[0] if editing else _int(request.GET.get("edit"))
    rows: list[dict[str, Any]] = []
    for route in routes:
        edit_form = None
        if route.pk == edit_pk:
            edit_form = editing[1] if editing else AlertRouteForm.for_route(route)
        rows.append({"route": route, "matchers": matchers_text(route.matchers), "form": edit_form})
    for_alert = request.GET.get("for")
    initial = next(
        (
            {"matchers": matchers_text(_route_labels(a.labels))}
            for a in unrouted
            if a.fingerprint == for_alert
        ),
        None,
    )
    context = {
        "rows": rows,
        # A route added since the alert last came matches it now: its incident opens at the next repeat.
        "unrouted": [
            {"alert": a, "labels": matchers_text(a.labels), "route": alerts.route_for(a.labels, routes)}
            for a in unrouted
        ],
        "may_write": _may_write(request.user),
        "form": form or AlertRouteForm(initial=initial),
    }
    return render(request, "incidents/alert_routes.html", context, status=status)


def _route_labels(labels: dict[str, str]) -> dict[str, str]:
    """The labels a route for an unrouted alert starts from: its alertname (and cluster), if it has them."""
    return {name: labels[name] for name in ("alertname", "cluster") if name in labels} or dict(labels)


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


@require_GET
def alert_routes_page(request: HttpRequest) -> HttpResponse:
    return _page(request)


@role_required(*WRITERS, action=alerts.ROUTE_ACTION)
@require_POST
def alert_route_new(request: HttpRequest) -> HttpResponse:
    form = AlertRouteForm(request.POST)
    sent = form_submit(
        form,
        lambda data: alerts.alert_route_create(actor=acting_user(request), **data),
        fallback_field="matchers",
    )
    if not sent.ok:
        return _page(request, form=form, status=sent.status)
    messages.success(request, f"Route added at position {sent.value.position}.")
    return redirect("incidents:alert-routes")


@role_required(*WRITERS, action=alerts.ROUTE_ACTION)
@require_POST
def alert_route_edit(request: HttpRequest, pk: int) -> HttpResponse:
    route = get_object_or_404(AlertRoute, pk=pk)
    form = AlertRouteForm(request.POST, prefix=f"route-{pk}")

    def save(data: dict[str, Any]) -> AlertRoute:
        if data.get("position") is None:
            data = {**data, "position": route.position}
        return alerts.alert_route_update(actor=acting_user(request), route=route, changes=data)  # type: ignore[arg-type]

    sent = form_submit(form, save, fallback_field="matchers")
    if not sent.ok:
        return _page(request, editing=(pk, form), status=sent.status)
    messages.success(request, f"Route at position {sent.value.position} saved.")
    return redirect("incidents:alert-routes")


@role_required(*WRITERS, action=alerts.ROUTE_ACTION)
@require_POST
def alert_route_delete(request: HttpRequest, pk: int) -> HttpResponse:
    route = get_object_or_404(AlertRoute, pk=pk)
    alerts.alert_route_delete(actor=acting_user(request), route=route)
    messages.success(request, "Route deleted; alerts it matched go to the next route that matches.")
    return redirect("incidents:alert-routes")
