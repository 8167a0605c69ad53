from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"

    def ready(self) -> None:
        from metrics import reference_names

        reference_names.connect()
