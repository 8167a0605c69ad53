from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"

    def ready(self):
        from metrics.rollups import receivers  # noqa: F401 - connects the rollup maintenance to ingest
