"""/account/tokens/: make a token (shown once), list and revoke my own, through htmx or plain posts."""

from __future__ import annotations

import re

import pytest

from core.models import ApiToken
from tests.conftest import api_token

pytestmark = pytest.mark.django_db
PAGE = "/account/tokens/"
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_the_user_menu_links_the_page(client, viewer):
    client.force_login(viewer)
    assert f'href="{PAGE}"' in client.get("/programs/").content.decode()


def test_create_shows_the_secret_once_then_lists_it_without(client, viewer):
    client.force_login(viewer)
    made = client.post(PAGE, {"name": "nightly", "scopes": ["ingest", "read"], "expires_in_days": 30}, **HTMX)
    html = made.content.decode()
    assert made.status_code == 200
    secret = re.search(r'data-testid="token-secret">(rt_[\w-]+)<', html).group(1)
    assert 'hx-swap-oob="true"' in html and "Copy it now" in html
    token = ApiToken.objects.get(user=viewer)
    assert token.scopes == ["ingest", "read"] and token.name == "nightly"
    again = client.get(PAGE).content.decode()
    assert "nightly" in again and token.prefix in again and secret not in again


def test_bad_input_is_shown_on_the_field(client, viewer):
    client.force_login(viewer)
    refused = client.post(PAGE, {"name": "", "expires_in_days": 0}, **HTMX)
    assert refused.status_code == 400
    assert refused.content.decode().count('role="alert"') >= 3
    assert not ApiToken.objects.exists()


def test_revoke_my_token_but_not_someone_elses(client, viewer, lead):
    api_token(viewer)
    api_token(lead)
    mine, theirs = ApiToken.objects.get(user=viewer), ApiToken.objects.get(user=lead)
    client.force_login(viewer)
    assert client.post(f"{PAGE}{theirs.pk}/revoke/", **HTMX).status_code == 404
    revoked = client.post(f"{PAGE}{mine.pk}/revoke/", **HTMX)
    assert revoked.status_code == 200 and "revoked: it works no more" in revoked.content.decode()
    assert ApiToken.objects.get(pk=mine.pk).status == "revoked"
    assert ApiToken.objects.get(pk=theirs.pk).status == "active"
    assert client.post(f"{PAGE}{mine.pk}/revoke/").status_code == 302  # plain post: back to the page
