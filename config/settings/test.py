from .base import *  # noqa: F403
from .base import env

# Tests run tasks in-process unless a test starts the real worker (tests/conftest.py switches it).
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
NOTIFICATION_RETRY_BACKOFF = 1
REQUIRE_SERVICES = env.bool("REQUIRE_SERVICES", default=False)
AXES_ENABLED = True
# Each test process counts throttles for itself, so tests do not share counts through a developer's Redis;
# tests/core/test_throttle.py points the cache at the real Redis to test the shared counting.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# The read caches are on, as in production: one process shares this cache with itself (tests/conftest.py
# empties it before each test).
READ_CACHE = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

# A "replica" alias as Django's test mirror of the primary (a second connection to the same database),
# switched off: tests/core/test_replica.py switches REPLICA_READS on to test the routing on it.
DATABASES["replica"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}  # noqa: F405
REPLICA_READS = False
