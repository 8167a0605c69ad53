from django.urls import path

from freeze import views, views_exceptions, views_overrides
from freeze.views_history import window_history_page

app_name = "freeze"

urlpatterns = [
    path("", views.freeze_list, name="list"),
    path("windows/<int:window_id>/", views.freeze_list, name="window"),
    path("windows/<int:window_id>/levels/", views.levels_edit, name="levels"),
    path("windows/<int:window_id>/history/", window_history_page, name="window-history"),
    path("windows/<int:window_id>/levels/import/", views.levels_import, name="levels-import"),
    path("exceptions/", views_exceptions.exceptions_all, name="exceptions"),
    path("exceptions/new/", views_exceptions.exception_new, name="exception-new"),
    path("exceptions/level/", views_exceptions.exception_level, name="exception-level"),
    path("exceptions/<int:pk>/", views_exceptions.exception_detail, name="exception"),
    path("exceptions/<int:pk>/edit/", views_exceptions.exception_edit, name="exception-edit"),
    path("exceptions/<int:pk>/<slug:action>/", views_exceptions.exception_act, name="exception-act"),
    path("queues/", views_exceptions.queues, name="queues"),
    path("overrides/new/", views_overrides.override_new, name="override-new"),
    path("overrides/<int:pk>/review/", views_overrides.override_review, name="override-review"),
]
