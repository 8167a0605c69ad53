from django.apps import AppConfig


class WorkConfig(AppConfig):
    """ "My work": what waits for the signed-in person, across programs and the freeze list. It sits above
    every other app because it reads them all; nothing imports it."""

    name = "work"
    verbose_name = "My work"
