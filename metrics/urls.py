from django.urls import path, register_converter

from metrics.pages import definitions, feeds, ingest, metrics


class MetricRefConverter:
    """'key' (the active version) or 'key@N' (that version, whatever its status)."""

    regex = r"[-a-zA-Z0-9_]+(?:@[0-9]+)?"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(MetricRefConverter, "metricref")

app_name = "metrics"

urlpatterns = [
    path("", metrics.registry, name="registry"),
    path("compare/", metrics.comparison_page, name="compare"),
    path("feeds/", feeds.feeds_page, name="feeds"),
    path("new/", definitions.definition_register_page, name="register"),
    path("<slug:key>/versions/new/", definitions.version_new_page, name="version-new"),
    path(
        "<slug:key>@<int:version>/activate/",
        definitions.version_activate_page,
        name="version-activate",
    ),
    path(
        "<slug:key>@<int:version>/deprecate/",
        definitions.version_deprecate_page,
        name="version-deprecate",
    ),
    path("<metricref:key>/ingest/", ingest.ingest_page, name="ingest"),
    # `key` may carry @N here: the page of that version.
    path("<metricref:key>/", metrics.metric_detail, name="detail"),
]
