from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from core.api.auth import MeView, TokenObtainView

api_v1 = [
    path("auth/token/", TokenObtainView.as_view(), name="auth-token"),
    path("auth/me/", MeView.as_view(), name="auth-me"),
    path("", include("metrics.api_urls")),
    path("", include("program.api_urls")),
    path("", include("freeze.api_urls")),
]

urlpatterns = [
    path("", include("core.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI: its start-up script is served as a file (the split view); its page keeps one inline <style>.
    path(
        "api/docs/",
        csp_update({"style-src": [UNSAFE_INLINE]})(SpectacularSwaggerSplitView.as_view(url_name="schema")),
        name="api-docs",
    ),
    path("metrics/", include("metrics.urls")),
    path("programs/", include("program.urls")),
    path("freeze/", include("freeze.urls")),
]


def handler404(request, exception=None):
    from django.views.defaults import page_not_found

    from core.api.errors import api_not_found

    if request.path_info.startswith("/api/"):
        return api_not_found(request, exception)
    return page_not_found(request, exception)


def handler500(request):
    from django.views.defaults import server_error

    from core.api.errors import api_server_error

    if request.path_info.startswith("/api/"):
        return api_server_error(request)
    return server_error(request)
