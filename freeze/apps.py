from django.apps import AppConfig


class FreezeConfig(AppConfig):
    name = "freeze"

    def ready(self):
        from freeze import receivers  # noqa: F401 - connects the program hooks
