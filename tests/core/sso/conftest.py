"""A real OpenID provider for the single sign-on tests (tests/oidc_provider/server.mjs: panva's certified
oidc-provider on Node), and a driver that walks its login and consent pages as a browser would.

The provider runs once per session (per xdist worker) on a free port; each test gets its users and
records cleared, a client registered for its redirect URI, and the tracker's settings pointed at it.
"""

from __future__ import annotations

import fcntl
import json
import re
import select
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

from core.sso.provider import discovery_forget
from tests.system_packages import require_program

SERVER_DIR = Path(__file__).resolve().parents[2] / "oidc_provider"
START_TIMEOUT = 30.0
PROVIDER_NAME = "Test ID"
# Provider groups → roles, as an organisation would write OIDC_ROLE_GROUPS.
ROLE_GROUPS = {
    "platform-admins": ("rt-admins",),
    "program-leads": ("rt-leads",),
    "metric-owners": ("rt-metric-owners",),
    "framework-engineers": ("rt-engineers",),
}
FORM_ACTION = re.compile(r'<form[^>]*action="([^"]+)"')
PROMPT = re.compile(r'name="prompt" value="(\w+)"')


@dataclass
class OpenIdProvider:
    issuer: str
    http: httpx.Client
    clients: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def discovery_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def user(self, login: str, **claims: Any) -> None:
        """Who may sign in as `login`, with which claims (`groups`, `email`, `preferred_username`…)."""
        self.http.put(f"/_test/users/{login}", json=claims).raise_for_status()

    def authorizations(self) -> list[dict[str, str]]:
        return self.http.get("/_test/authorizations").json()

    def grants(self) -> list[dict[str, Any]]:
        return self.http.get("/_test/grants").json()

    def reset(self) -> None:
        self.http.post("/_test/reset").raise_for_status()

    def client_for(self, redirect_uri: str) -> tuple[str, str]:
        """(client_id, client_secret) of a client registered for `redirect_uri`, through the provider's
        own dynamic client registration (RFC 7591)."""
        if redirect_uri not in self.clients:
            response = self.http.post(
                "/reg",
                json={"redirect_uris": [redirect_uri], "token_endpoint_auth_method": "client_secret_post"},
            )
            response.raise_for_status()
            body = response.json()
            self.clients[redirect_uri] = (body["client_id"], body["client_secret"])
        return self.clients[redirect_uri]


def _npm_ci(npm: str) -> None:
    """Install the provider's pinned packages once; xdist workers wait for each other on a lock."""
    with open(Path(tempfile.gettempdir()) / "rebuild-tracker-oidc-npm.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (SERVER_DIR / "node_modules" / "oidc-provider" / "package.json").exists():
            subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=SERVER_DIR,
                check=True,
                capture_output=True,
                timeout=300,
            )


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory) -> Iterator[OpenIdProvider]:
    node = require_program("node", package="nodejs")
    npm = require_program("npm", package="npm")
    _npm_ci(npm)
    log = tmp_path_factory.mktemp("oidc") / "provider.log"
    with open(log, "w") as stderr:
        process = subprocess.Popen(
            [node, "server.mjs"], cwd=SERVER_DIR, stdout=subprocess.PIPE, stderr=stderr, text=True
        )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], START_TIMEOUT)
        line = process.stdout.readline() if ready else ""
        if not line:
            pytest.fail(f"the OpenID provider did not start: {log.read_text()}")
        issuer = json.loads(line)["issuer"]
        with httpx.Client(base_url=issuer, timeout=10) as http:
            yield OpenIdProvider(issuer=issuer, http=http)
    finally:
        process.terminate()
        process.wait(timeout=10)


def configure(settings, provider: OpenIdProvider, redirect_uri: str) -> None:
    """Point the tracker at the provider, as an operator would with environment variables."""
    client_id, secret = provider.client_for(redirect_uri)
    settings.OIDC_RP_CLIENT_ID = client_id
    settings.OIDC_RP_CLIENT_SECRET = secret
    settings.OIDC_OP_DISCOVERY_URL = provider.discovery_url
    settings.OIDC_PROVIDER_NAME = PROVIDER_NAME
    settings.OIDC_RP_SCOPES = "openid email profile groups"
    settings.OIDC_ROLE_GROUPS = ROLE_GROUPS
    discovery_forget()


@pytest.fixture
def sso(oidc_provider, settings) -> Iterator[OpenIdProvider]:
    """SSO configured against the real provider, for Django's test client (redirect URI on testserver)."""
    oidc_provider.reset()
    configure(settings, oidc_provider, "http://testserver/oidc/callback/")
    yield oidc_provider
    discovery_forget()


def through_provider(provider: OpenIdProvider, url: str, login: str, *, abort: bool = False) -> str:
    """Walk the provider's pages from an authorization URL as a browser would: sign in as `login` (any
    password: the development login checks none), consent, and return the URL it sends the browser
    back to. With `abort`, cancel on the login page instead (the provider answers access_denied)."""
    with httpx.Client(timeout=10) as browser:
        for _ in range(12):
            if not url.startswith(provider.issuer):
                return url
            response = browser.get(url)
            if response.is_redirect:
                url = urljoin(url, response.headers["location"])
                continue
            page = response.text
            action = urljoin(url, FORM_ACTION.search(page).group(1))
            if abort:
                response = browser.get(f"{action}/abort")
            elif PROMPT.search(page).group(1) == "login":
                response = browser.post(action, data={"prompt": "login", "login": login, "password": "any"})
            else:
                response = browser.post(action, data={"prompt": "consent"})
            assert response.is_redirect, response.text
            url = urljoin(url, response.headers["location"])
    raise AssertionError(f"the provider never sent the browser back: {url}")


def sign_in(client, provider: OpenIdProvider, login: str, *, abort: bool = False):
    """The whole authorization-code flow through the test client and the real provider; returns the
    callback's response."""
    start = client.get("/oidc/authenticate/")
    assert start.status_code == 302, start.content
    back = through_provider(provider, start["Location"], login, abort=abort)
    assert urlsplit(back).path == "/oidc/callback/", back
    return client.get(back)


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def says(response, text: str) -> bool:
    """Whether the page shows `text` (as the template escapes it: "provider's" is "provider&#x27;s")."""
    from django.utils.html import escape

    return escape(text) in response.content.decode()
