from .base import *  # noqa: F403
from .base import BASE_DIR, REST_FRAMEWORK, env

DEBUG = env.bool("DJANGO_DEBUG", default=True)

WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

# Notification emails land as files under .data/mail/ instead of cluttering the console.
EMAIL_BACKEND = env("EMAIL_BACKEND", default="django.core.mail.backends.filebased.EmailBackend")
EMAIL_FILE_PATH = BASE_DIR / ".data" / "mail"

# The browsable API (HTML forms over every endpoint) is a development aid only.
REST_FRAMEWORK = {
    **REST_FRAMEWORK,
    "DEFAULT_RENDERER_CLASSES": [
        "core.api.renderers.FastJSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
