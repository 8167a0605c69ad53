from django.urls import path

from incidents.pages import alert_routes, incidents

app_name = "incidents"

urlpatterns = [
    path("", incidents.incidents_page, name="list"),
    path("new/", incidents.incident_new, name="new"),
    path("alert-routes/", alert_routes.alert_routes_page, name="alert-routes"),
    path("alert-routes/new/", alert_routes.alert_route_new, name="alert-route-new"),
    path("alert-routes/<int:pk>/edit/", alert_routes.alert_route_edit, name="alert-route-edit"),
    path("alert-routes/<int:pk>/delete/", alert_routes.alert_route_delete, name="alert-route-delete"),
    path("<int:pk>/", incidents.incident_detail, name="detail"),
    path("<int:pk>/edit/", incidents.incident_edit, name="edit"),
    path("<int:pk>/resolve/", incidents.incident_resolve, name="resolve"),
    path("<int:pk>/checklist/", incidents.incident_checklist, name="checklist"),
]
