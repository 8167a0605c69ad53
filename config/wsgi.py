import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

application = get_wsgi_application()

# Import the URLconf, and with it every view module, while the worker boots instead of in its first
# request: that request paid ~0.25 CPU-s for it (benchmarks/ingest.py counted it once per worker).
get_resolver().url_patterns  # noqa: B018 - read for its side effect, the import
