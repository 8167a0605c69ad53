from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from core.sso import checks  # noqa: F401  # registers the single sign-on settings checks
        from core.telemetry import tasks as task_telemetry

        # In every process that loads Django (web and Celery workers): count task runs for /metrics.
        task_telemetry.connect()
