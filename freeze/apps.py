from django.apps import AppConfig


class FreezeConfig(AppConfig):
    name = "freeze"

    def ready(self):
        from freeze import check_invalidation, gate_notices, receivers  # noqa: F401 - receivers connects the program hooks

        check_invalidation.connect()
        gate_notices.register()
