"""The Celery app. Every periodic schedule lives in settings.CELERY_BEAT_SCHEDULE."""

import os

from celery import Celery

from core.liveness import WorkerLiveness

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("rebuild_tracker")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The worker touches its liveness file while it runs (`manage.py liveness worker`).
app.steps["worker"].add(WorkerLiveness)
