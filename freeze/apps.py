from django.apps import AppConfig


class FreezeConfig(AppConfig):
    name = "freeze"
