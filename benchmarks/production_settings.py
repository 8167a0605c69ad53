"""Settings for benchmarks/mixed_load.py only: production's settings plus the bare DRF view's URLconf.

The environment gives what production requires (DATABASE_URL, CELERY_BROKER_URL, CACHE_URL,
DJANGO_SECRET_KEY, DJANGO_ALLOWED_HOSTS); the client sends X-Forwarded-Proto: https, as the TLS proxy
in front of production does, so the SSL redirect lets it through.
"""

from config.settings.production import *  # noqa: F403

ROOT_URLCONF = "reads_urls"
