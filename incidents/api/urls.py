from django.urls import path

from incidents.api import alert_routes, alertmanager, incidents

urlpatterns = [
    path("incidents/", incidents.IncidentList.as_view(), name="incident-list"),
    path("incidents/bug-classes/", incidents.BugClassList.as_view(), name="incident-bug-classes"),
    path("incidents/mttr/", incidents.IncidentSpeed.as_view(), name="incident-mttr"),
    path("incidents/recurrence/", incidents.IncidentRecurrence.as_view(), name="incident-recurrence"),
    path("incidents/alertmanager/", alertmanager.AlertmanagerWebhook.as_view(), name="incident-alertmanager"),
    path("incidents/alert-routes/", alert_routes.AlertRouteList.as_view(), name="incident-alert-routes"),
    path(
        "incidents/alert-routes/<int:pk>/",
        alert_routes.AlertRouteDetail.as_view(),
        name="incident-alert-route",
    ),
    path("incidents/import/", incidents.IncidentImport.as_view(), name="incident-import"),
    path("incidents/<int:pk>/", incidents.IncidentDetail.as_view(), name="incident-detail"),
]
