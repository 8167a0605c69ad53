from django.apps import AppConfig


class ProgramConfig(AppConfig):
    name = "program"

    def ready(self) -> None:
        from program import receivers  # noqa: F401 - connects the metrics hooks
