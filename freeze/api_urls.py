from django.urls import path

from freeze import api, api_check, api_exceptions, api_overrides
from freeze.api_history import WindowHistory

urlpatterns = [
    path("components/", api.ComponentList.as_view(), name="component-list"),
    path("freeze/windows/", api.WindowList.as_view(), name="window-list"),
    path("freeze/windows/<int:pk>/levels/", api.WindowLevels.as_view(), name="window-levels"),
    path("freeze/windows/<int:pk>/history/", WindowHistory.as_view(), name="window-history"),
    path(
        "freeze/windows/<int:pk>/levels/import/",
        api.WindowLevelsImport.as_view(),
        name="window-levels-import",
    ),
    path("freeze/check/", api_check.FreezeCheckView.as_view(), name="freeze-check"),
    path("freeze/overrides/", api_overrides.OverrideList.as_view(), name="override-list"),
    path("freeze/overrides/<int:pk>/review/", api_overrides.OverrideReview.as_view(), name="override-review"),
    path("freeze-exceptions/", api_exceptions.ExceptionList.as_view(), name="exception-list"),
    path("freeze-exceptions/<int:pk>/", api_exceptions.ExceptionDetail.as_view(), name="exception-detail"),
    path(
        "freeze-exceptions/<int:pk>/submit/",
        api_exceptions.ExceptionSubmit.as_view(),
        name="exception-submit",
    ),
    path(
        "freeze-exceptions/<int:pk>/approve/",
        api_exceptions.ExceptionApprove.as_view(),
        name="exception-approve",
    ),
    path(
        "freeze-exceptions/<int:pk>/reject/",
        api_exceptions.ExceptionReject.as_view(),
        name="exception-reject",
    ),
    path(
        "freeze-exceptions/<int:pk>/withdraw/",
        api_exceptions.ExceptionWithdraw.as_view(),
        name="exception-withdraw",
    ),
    path(
        "freeze-exceptions/<int:pk>/revoke/",
        api_exceptions.ExceptionRevoke.as_view(),
        name="exception-revoke",
    ),
]
