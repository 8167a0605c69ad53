from django.urls import path

from freeze.pages import components, exceptions, freeze_list, overrides
from freeze.pages.history import window_history_page

app_name = "freeze"

urlpatterns = [
    path("", freeze_list.freeze_list, name="list"),
    path("windows/<int:window_id>/", freeze_list.freeze_list, name="window"),
    path("windows/<int:window_id>/levels/", freeze_list.levels_edit, name="levels"),
    path("windows/<int:window_id>/history/", window_history_page, name="window-history"),
    path("windows/<int:window_id>/levels/import/", freeze_list.levels_import, name="levels-import"),
    path("components/<slug:key>/", components.component_detail, name="component"),
    path("exceptions/", exceptions.exceptions_all, name="exceptions"),
    path("exceptions/new/", exceptions.exception_new, name="exception-new"),
    path("exceptions/level/", exceptions.exception_level, name="exception-level"),
    path("exceptions/<int:pk>/", exceptions.exception_detail, name="exception"),
    path("exceptions/<int:pk>/edit/", exceptions.exception_edit, name="exception-edit"),
    path("exceptions/<int:pk>/<slug:action>/", exceptions.exception_act, name="exception-act"),
    path("queues/", exceptions.queues, name="queues"),
    path("overrides/new/", overrides.override_new, name="override-new"),
    path("overrides/<int:pk>/review/", overrides.override_review, name="override-review"),
]
