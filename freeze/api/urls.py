from django.urls import path

from freeze.api import check, exceptions, overrides, windows
from freeze.api.history import WindowHistory

urlpatterns = [
    path("components/", windows.ComponentList.as_view(), name="component-list"),
    path("freeze/windows/", windows.WindowList.as_view(), name="window-list"),
    path("freeze/windows/<int:pk>/levels/", windows.WindowLevels.as_view(), name="window-levels"),
    path("freeze/windows/<int:pk>/history/", WindowHistory.as_view(), name="window-history"),
    path(
        "freeze/windows/<int:pk>/levels/import/",
        windows.WindowLevelsImport.as_view(),
        name="window-levels-import",
    ),
    path("freeze/check/", check.FreezeCheckView.as_view(), name="freeze-check"),
    path("freeze/overrides/", overrides.OverrideList.as_view(), name="override-list"),
    path("freeze/overrides/<int:pk>/review/", overrides.OverrideReview.as_view(), name="override-review"),
    path("freeze-exceptions/", exceptions.ExceptionList.as_view(), name="exception-list"),
    path("freeze-exceptions/<int:pk>/", exceptions.ExceptionDetail.as_view(), name="exception-detail"),
    path("freeze-exceptions/<int:pk>/impact/", exceptions.ExceptionImpact.as_view(), name="exception-impact"),
    path(
        "freeze-exceptions/<int:pk>/submit/",
        exceptions.ExceptionSubmit.as_view(),
        name="exception-submit",
    ),
    path(
        "freeze-exceptions/<int:pk>/approve/",
        exceptions.ExceptionApprove.as_view(),
        name="exception-approve",
    ),
    path(
        "freeze-exceptions/<int:pk>/reject/",
        exceptions.ExceptionReject.as_view(),
        name="exception-reject",
    ),
    path(
        "freeze-exceptions/<int:pk>/withdraw/",
        exceptions.ExceptionWithdraw.as_view(),
        name="exception-withdraw",
    ),
    path(
        "freeze-exceptions/<int:pk>/revoke/",
        exceptions.ExceptionRevoke.as_view(),
        name="exception-revoke",
    ),
]
