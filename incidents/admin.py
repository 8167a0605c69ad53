from __future__ import annotations

from typing import cast

from django.contrib import admin
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from core.admin_base import ReadOnlyAdmin, ServiceSaveAdmin, changed_values, run_service_action
from core.roles import acting_user
from incidents import services
from incidents.models import AlertRoute, BugClass, Incident, UnroutedAlert
from incidents.services import alerts

FILE_FIELDS = (
    "title",
    "system",
    "component",
    "workload",
    "bug_class",
    "severity",
    "opened_at",
    "detected_at",
    "mitigated_at",
    "resolved_at",
    "troubleshooting",
    "link",
    "owner_team",
)


@admin.register(BugClass)
class BugClassAdmin(ReadOnlyAdmin):
    """The vocabulary is seeded by a data migration; incidents point at it (PROTECT)."""

    list_display = ("key", "name")
    search_fields = ("key", "name")


@admin.register(Incident)
class IncidentAdmin(ServiceSaveAdmin):
    """Filed with incident_file and changed with incident_update, so the time-order rules, the audit
    row and the mttr/mttd evidence hold here too."""

    list_display = ("id", "title", "system", "bug_class", "severity", "opened_at", "resolved_at")
    list_filter = ("system", "bug_class", "severity")
    list_select_related = ("system", "bug_class")
    search_fields = ("title",)
    fields = FILE_FIELDS
    actions = ["resolve_now"]

    def service_save(self, request: HttpRequest, form: ModelForm[Incident], change: bool) -> Incident:
        if change:
            return services.incident_update(
                actor=acting_user(request),
                incident=form.instance,
                changes=cast(services.IncidentChanges, changed_values(form, FILE_FIELDS)),
            )
        return services.incident_file(
            actor=acting_user(request), **{name: form.cleaned_data[name] for name in FILE_FIELDS}
        )

    @admin.action(description="Resolve the selected incidents now")
    def resolve_now(self, request: HttpRequest, queryset: QuerySet[Incident]) -> None:
        run_service_action(
            self,
            request,
            queryset,
            # run_service_action hands back the rows of `queryset`: Incidents.
            lambda incident: services.incident_resolve(
                actor=acting_user(request), incident=cast(Incident, incident)
            ),
            "{count} incidents resolved.",
        )


@admin.register(AlertRoute)
class AlertRouteAdmin(ServiceSaveAdmin):
    """Saved through alert_route_create / alert_route_update and deleted by an action that calls
    alert_route_delete, so the matcher checks and the audit rows hold here too."""

    list_display = ("position", "matchers", "system", "component", "bug_class", "severity")
    list_select_related = ("system", "component", "bug_class")
    fields = alerts.ROUTE_FIELDS
    actions = ["delete_routes"]

    def service_save(self, request: HttpRequest, form: ModelForm[AlertRoute], change: bool) -> AlertRoute:
        if change:
            return alerts.alert_route_update(
                actor=acting_user(request),
                route=form.instance,
                changes=cast(alerts.RouteChanges, changed_values(form, alerts.ROUTE_FIELDS)),
            )
        return alerts.alert_route_create(
            actor=acting_user(request), **{name: form.cleaned_data[name] for name in alerts.ROUTE_FIELDS}
        )

    @admin.action(description="Delete the selected routes")
    def delete_routes(self, request: HttpRequest, queryset: QuerySet[AlertRoute]) -> None:
        run_service_action(
            self,
            request,
            queryset,
            lambda route: alerts.alert_route_delete(
                actor=acting_user(request), route=cast(AlertRoute, route)
            ),
            "{count} routes deleted.",
        )


@admin.register(UnroutedAlert)
class UnroutedAlertAdmin(ReadOnlyAdmin):
    """Kept by alert_receive; an alert leaves this list when a route opens its incident or it resolves."""

    list_display = ("alertname", "fingerprint", "starts_at", "last_seen_at", "times_seen")
    search_fields = ("alertname", "fingerprint")
