from django.apps import AppConfig


class FreezeConfig(AppConfig):
    name = "freeze"

    def ready(self) -> None:
        from freeze import gate_notices, receivers  # noqa: F401 - receivers connects the program hooks

        gate_notices.register()
