from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.urls import URLPattern, URLResolver, include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from core.api.auth import MeView, TokenObtainView
from core.pages import site
from core.telemetry.views import metrics_scrape
from metrics.api.otlp import OtlpMetricsReceiver
from program.api.urls import prometheus_urlpatterns

api_v1: list[URLPattern | URLResolver] = [
    path("auth/token/", TokenObtainView.as_view(), name="auth-token"),
    path("auth/me/", MeView.as_view(), name="auth-me"),
    path("", include("freeze.api.urls")),
    path("", include("metrics.api.urls")),
    path("", include("program.api.urls")),
    path("", include("core.api.urls")),
    path("", include("incidents.api.urls")),
    path("", include("work.api.urls")),
]

urlpatterns = [
    # First: resolving walks the patterns in order, and API calls (CI's freeze check) are the most frequent.
    path("api/v1/", include(api_v1)),
    # Prometheus' HTTP API for Grafana: its data source URL is <site>/api/prom, to which it appends
    # api/v1/query_range and the rest (program/api/prometheus.py).
    path("api/prom/api/v1/", include(prometheus_urlpatterns)),
    path("", include("work.urls")),
    path("", include("core.urls")),
    path("admin/", admin.site.urls),
    # OTLP/HTTP's metrics path under /otlp: an exporter given the base URL <site>/otlp appends v1/metrics.
    # An API view: an exporter without a token gets 401, not the login page's redirect.
    path("otlp/v1/metrics", login_not_required(OtlpMetricsReceiver.as_view()), name="otlp-metrics"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI: its start-up script is served as a file (the split view); its page keeps one inline <style>.
    path(
        "api/docs/",
        csp_update({"style-src": [UNSAFE_INLINE]})(SpectacularSwaggerSplitView.as_view(url_name="schema")),
        name="api-docs",
    ),
    # The tracker's own metrics for Prometheus; exactly "/metrics", beside the registry's "/metrics/".
    path("metrics", metrics_scrape, name="prometheus-metrics"),
    path("metrics/", include("metrics.urls")),
    path("programs/", include("program.urls")),
    path("freeze/", include("freeze.urls")),
    path("incidents/", include("incidents.urls")),
    re_path(r"^api/", site.api_unknown, name="api-unknown"),
]

handler403 = "core.pages.site.permission_denied"
handler404 = "core.pages.site.page_not_found"
handler500 = "core.pages.site.server_error"
