from django.urls import path

from incidents import views

app_name = "incidents"

urlpatterns = [
    path("", views.incidents_page, name="list"),
    path("new/", views.incident_new, name="new"),
    path("<int:pk>/", views.incident_detail, name="detail"),
    path("<int:pk>/edit/", views.incident_edit, name="edit"),
    path("<int:pk>/resolve/", views.incident_resolve, name="resolve"),
    path("<int:pk>/checklist/", views.incident_checklist, name="checklist"),
]
