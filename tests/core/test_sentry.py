"""Sentry is initialised only when SENTRY_DSN is set, and then reports errors to that DSN: here a local
receiver standing in for Sentry's ingest endpoint (no real Sentry)."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.core.test_settings_and_health import run_with_production_settings

# In the production process: set up Django, say whether a Sentry client is active, then log an error.
SCRIPT = """
import django, logging, sentry_sdk
django.setup()
from django.conf import settings
print(settings.SENTRY_ENABLED, sentry_sdk.get_client().is_active())
logging.getLogger("tests.sentry").error("reported-to-sentry")
sentry_sdk.flush(timeout=5)
"""


@pytest.fixture
def sentry_receiver():
    """Collects the bodies POSTed to it, as Sentry's envelope endpoint would receive them."""
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["content-length"]))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            bodies.append(body)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://publickey@127.0.0.1:{server.server_port}/42", bodies
    server.shutdown()


def test_with_a_dsn_sentry_is_initialised_and_an_error_reaches_it(sentry_receiver):
    dsn, bodies = sentry_receiver
    result = run_with_production_settings("-c", SCRIPT, SENTRY_DSN=dsn)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]
    assert any(b"reported-to-sentry" in body for body in bodies), bodies


def test_without_a_dsn_nothing_is_initialised(sentry_receiver):
    _, bodies = sentry_receiver
    result = run_with_production_settings("-c", SCRIPT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]
    assert bodies == []
    # The error is still logged, as a JSON line (production's log format).
    assert '"event": "reported-to-sentry"' in result.stderr
