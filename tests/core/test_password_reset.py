"""Password reset by email for local accounts: the link on the login page, the email, the new password,
and the old API tokens dead afterwards."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from rest_framework.test import APIClient

from core.audit import transitions_for
from tests.conftest import PASSWORD, api_token

pytestmark = pytest.mark.django_db
NEW_PASSWORD = "an-entirely-new-one-2027"


def test_reset_by_email_sets_a_new_password_and_ends_every_token(
    client, viewer, django_capture_on_commit_callbacks
):
    old_token = api_token(viewer, "ingest")
    login = client.get("/login/").content.decode()
    assert 'href="/password_reset/"' in login and "Forgot your password?" in login

    assert client.post("/password_reset/", {"email": "viewer@example.com"}).status_code == 302
    assert len(mail.outbox) == 1
    link = re.search(r"https?://[^/\s]+(/reset/\S+/)", mail.outbox[0].body).group(1)
    opened = client.get(link, follow=True)
    assert b"Set a new password" in opened.content
    form_url = opened.redirect_chain[-1][0]
    mismatched = client.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": "other"})
    assert mismatched.status_code == 200 and b'role="alert"' in mismatched.content
    with django_capture_on_commit_callbacks(execute=True):  # the notice is sent after the commit
        done = client.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"] == "/reset/done/"

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {old_token}")
    assert api.get("/api/v1/auth/me/").status_code == 401
    for password, status in ((PASSWORD, 400), (NEW_PASSWORD, 200)):
        sign_in = APIClient().post("/api/v1/auth/token/", {"username": "viewer", "password": password})
        assert sign_in.status_code == status
    assert client.post("/login/", {"username": "viewer", "password": NEW_PASSWORD}).status_code == 302
    viewer.refresh_from_db()
    assert "password_reset" in [t.action for t in transitions_for(viewer)]
    assert any("password was changed" in message.subject for message in mail.outbox[1:])
    assert client.get(link).status_code == 200 and b"does not work" in client.get(link).content


def test_an_unknown_or_sso_only_address_gets_the_same_answer_and_no_email(client, viewer):
    viewer.set_unusable_password()  # as single sign-on creates users
    viewer.save()
    for email in ("viewer@example.com", "nobody@example.com"):
        response = client.post("/password_reset/", {"email": email})
        assert response.status_code == 302 and response["Location"] == "/password_reset/done/"
    assert mail.outbox == []


def test_the_reset_pages_are_open_without_signing_in(client):
    for url in ("/password_reset/", "/password_reset/done/", "/reset/done/"):
        assert client.get(url).status_code == 200, url
