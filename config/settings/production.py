from django.core.exceptions import ImproperlyConfigured

from core.telemetry.logs import logging_config

from .base import *  # noqa: F403
from .base import LOG_LEVEL, LOG_ROUTINE_TASKS, env

# Production refuses to start rather than fall back to something that only suits a laptop.
_REQUIRED = {
    "DATABASE_URL": "without it the app would connect to a default local database",
    "CELERY_BROKER_URL": "without a broker every task would run inside the request, its errors swallowed",
    "CACHE_URL": "throttle counts must be shared by every worker process (a Redis URL)",
}
for _name, _why in _REQUIRED.items():
    if not env.str(_name, default=""):
        raise ImproperlyConfigured(f"Set {_name} in production: {_why}.")

DEBUG = False
SECRET_KEY = env("DJANGO_SECRET_KEY")  # no default: a missing secret must stop the start-up
# Plus "localhost": the probes ask for it (the image's HEALTHCHECK, kubelet's httpGet with a Host header),
# since a pod's or container's own address is not known ahead. A forged "Host: localhost" gains nothing.
ALLOWED_HOSTS = [*env.list("DJANGO_ALLOWED_HOSTS"), "localhost"]

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
# Probes and Prometheus' scrape come over plain HTTP from inside the cluster or the container (kubelet,
# HEALTHCHECK, the ServiceMonitor); /metrics still wants METRICS_TOKEN.
SECURE_REDIRECT_EXEMPT = [r"^(healthz|livez|readyz|version|metrics)$"]
# Plain-HTTP local compose sets this false; anything reachable by others keeps it on.
SESSION_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
EMAIL_BACKEND = env("EMAIL_BACKEND", default="django.core.mail.backends.smtp.EmailBackend")

# Logs as JSON lines for the collector (LOG_FORMAT=console brings back the readable ones).
LOG_FORMAT = env.str("LOG_FORMAT", default="json")
try:
    LOGGING = logging_config(fmt=LOG_FORMAT, level=LOG_LEVEL, quiet_routine=not LOG_ROUTINE_TASKS)
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from exc
