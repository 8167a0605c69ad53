from django.urls import path

from incidents import api

urlpatterns = [
    path("incidents/", api.IncidentList.as_view(), name="incident-list"),
    path("incidents/bug-classes/", api.BugClassList.as_view(), name="incident-bug-classes"),
    path("incidents/mttr/", api.IncidentSpeed.as_view(), name="incident-mttr"),
    path("incidents/import/", api.IncidentImport.as_view(), name="incident-import"),
    path("incidents/<int:pk>/", api.IncidentDetail.as_view(), name="incident-detail"),
]
