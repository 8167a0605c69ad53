"""The Celery app. Every periodic schedule lives in settings.CELERY_BEAT_SCHEDULE."""

import os

from celery import Celery
from celery.signals import setup_logging
from django_structlog.celery.steps import DjangoStructLogInitStep

from core.liveness import WorkerLiveness

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("rebuild_tracker")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The worker touches its liveness file while it runs (`manage.py liveness worker`).
app.steps["worker"].add(WorkerLiveness)


# Django's LOGGING (config/settings: JSON lines in production) is the worker's and beat's too: a receiver
# of setup_logging stops Celery from replacing it with its own handlers and format (LOG_LEVEL sets the
# level, not `-l`).
@setup_logging.connect  # type: ignore[untyped-decorator]  # celery ships no type information
def _keep_django_logging(**kwargs: object) -> None:
    """Nothing to do: Django has configured logging already."""


# In the worker, each task's records carry the log context of the request (or task) that queued it:
# its request id, from the task's headers (django-structlog).
app.steps["worker"].add(DjangoStructLogInitStep)
