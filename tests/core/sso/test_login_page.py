"""The login page with single sign-on configured or not, and with password sign-in turned off."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from core.sso import errors
from tests.conftest import PASSWORD
from tests.core.sso.conftest import says

pytestmark = pytest.mark.django_db


@pytest.fixture
def sso_configured(settings):
    """Configured, not reached: showing the login page asks nothing of the provider."""
    settings.OIDC_RP_CLIENT_ID = "rebuild-tracker"
    settings.OIDC_RP_CLIENT_SECRET = "secret"
    settings.OIDC_OP_DISCOVERY_URL = "http://idp.invalid/.well-known/openid-configuration"
    settings.OIDC_PROVIDER_NAME = "Acme ID"


def test_login_page_offers_the_provider_beside_the_password_form(client, sso_configured):
    html = client.get("/login/?next=/programs/").content.decode()
    assert 'href="/oidc/authenticate/?next=/programs/">Sign in with Acme ID</a>' in html
    assert 'name="password"' in html


def test_without_sso_there_is_no_button_and_the_oidc_pages_say_so(client):
    assert "Sign in with" not in client.get("/login/").content.decode()
    for path in ("/oidc/authenticate/", "/oidc/callback/?code=a&state=b"):
        response = client.get(path)
        assert response.status_code == 404
        assert says(response, errors.SSO_OFF)


def test_local_login_off_shows_only_the_sso_button(client, sso_configured, settings):
    settings.LOCAL_LOGIN_ENABLED = False
    html = client.get("/login/").content.decode()
    assert "Sign in with Acme ID" in html
    assert 'name="password"' not in html


def test_local_login_off_refuses_a_posted_password(client, sso_configured, settings, viewer):
    settings.LOCAL_LOGIN_ENABLED = False
    response = client.post("/login/", {"username": "viewer", "password": PASSWORD})
    assert response.status_code == 403
    assert says(response, errors.LOCAL_LOGIN_OFF)
    assert client.get("/api/v1/auth/me/").status_code == 401


def test_local_login_off_refuses_passwords_at_the_admin_and_the_token_endpoint(
    client, api, sso_configured, settings
):
    User.objects.create_superuser("root", "root@example.com", PASSWORD)
    settings.LOCAL_LOGIN_ENABLED = False
    client.post("/admin/login/?next=/admin/", {"username": "root", "password": PASSWORD})
    assert client.get("/admin/").status_code == 302  # still the admin's login page
    assert api.post("/api/v1/auth/token/", {"username": "root", "password": PASSWORD}).status_code == 400


def test_local_login_on_still_signs_in_with_a_password(client, sso_configured, viewer):
    response = client.post("/login/", {"username": "viewer", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/api/v1/auth/me/").json()["username"] == "viewer"
