from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"

    def ready(self) -> None:
        from core.telemetry.views import scrape_collector_register
        from metrics import reference_names
        from metrics.rollups import receivers  # noqa: F401 - connects the rollup maintenance to ingest
        from metrics.telemetry import FeedAgeCollector

        reference_names.connect()
        scrape_collector_register(FeedAgeCollector())
