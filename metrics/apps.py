from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"

    def ready(self) -> None:
        from metrics import reference_names
        from metrics.rollups import receivers  # noqa: F401 - connects the rollup maintenance to ingest

        reference_names.connect()
