from django.urls import path

from incidents.pages import incidents

app_name = "incidents"

urlpatterns = [
    path("", incidents.incidents_page, name="list"),
    path("new/", incidents.incident_new, name="new"),
    path("<int:pk>/", incidents.incident_detail, name="detail"),
    path("<int:pk>/edit/", incidents.incident_edit, name="edit"),
    path("<int:pk>/resolve/", incidents.incident_resolve, name="resolve"),
    path("<int:pk>/checklist/", incidents.incident_checklist, name="checklist"),
]
