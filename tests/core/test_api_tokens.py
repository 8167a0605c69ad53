"""API tokens (core.ApiToken): stored as digests, several per user, named, scoped, expiring, revocable,
and dead at once when the password changes or the account is deactivated (also by SQL)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from core.audit import transitions_for
from core.models import ApiToken
from core.services.api_tokens import api_token_create, api_token_revoke, token_digest
from tests.conftest import PASSWORD, api_token

pytestmark = pytest.mark.django_db
ME = "/api/v1/auth/me/"
TOKENS = "/api/v1/tokens/"
LOGIN = "/api/v1/auth/token/"


def client_with(secret: str, keyword: str = "Token") -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{keyword} {secret}")
    return client


def sign_in(username: str = "viewer", **extra) -> dict:
    response = APIClient().post(LOGIN, {"username": username, "password": PASSWORD, **extra}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_no_secret_is_stored_in_clear(viewer):
    secrets = [sign_in()["token"], sign_in(scopes=["read"])["token"], api_token(viewer, "ingest")]
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM core_apitoken")
        stored = " ".join(str(value) for row in cursor.fetchall() for value in row)
        cursor.execute("SELECT * FROM core_transition")
        stored += " ".join(str(value) for row in cursor.fetchall() for value in row)
    for secret in secrets:
        assert secret.startswith("rt_") and len(secret) >= 46  # 32 random bytes, URL-safe base64
        assert secret not in stored
        assert secret[8:20] not in stored
        assert token_digest(secret) in stored


def test_each_sign_in_makes_a_new_token_shown_once(viewer):
    first, second = sign_in(), sign_in(name="ci", scopes=["read"], expires_in_days=7)
    assert first["token"] != second["token"]
    assert ApiToken.objects.filter(user=viewer).count() == 2
    assert second["name"] == "ci" and second["scopes"] == ["read"] and second["prefix"] == second["token"][:8]
    assert first["scopes"] == ["full"]  # what the old single token could do
    listed = client_with(first["token"]).get(TOKENS).json()["results"]
    assert [t["name"] for t in listed] == ["ci", "API token"]
    assert all("token" not in t for t in listed)  # the secret is never shown again
    for secret in (first["token"], second["token"]):
        assert client_with(secret).get(ME).json()["username"] == "viewer"


def test_bearer_is_accepted_too(viewer):
    assert client_with(api_token(viewer), "Bearer").get(ME).status_code == 200


def test_default_expiry_is_api_token_days(viewer, settings):
    settings.API_TOKEN_DAYS = 30
    made = sign_in()
    expires = ApiToken.objects.get(prefix=made["prefix"]).expires_at
    assert abs(expires - (timezone.now() + timedelta(days=30))) < timedelta(minutes=1)


def test_an_expired_token_is_refused_saying_so(viewer):
    secret = api_token(viewer)
    assert client_with(secret).get(ME).status_code == 200
    ApiToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    refused = client_with(secret).get(ME)
    assert refused.status_code == 401
    assert "expired" in refused.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"scopes": ["everything"]}, "scopes.0"),
        ({"scopes": []}, "scopes"),
        ({"expires_in_days": 0}, "expires_in_days"),
        ({"expires_in_days": 10_000}, "expires_in_days"),
        ({"name": ""}, "name"),
        ({"name": "x" * 101}, "name"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(viewer, body, field):
    client = client_with(api_token(viewer))
    response = client.post(TOKENS, {"name": "n", "scopes": ["read"], **body}, format="json")
    assert response.status_code == 400, response.json()
    assert field in {error["field"] for error in response.json()["errors"]}
    login = APIClient().post(LOGIN, {"username": "viewer", "password": PASSWORD, **body}, format="json")
    assert login.status_code == 400
    assert field in {error["field"] for error in login.json()["errors"]}


def test_the_tokens_api_creates_lists_and_revokes_my_own(viewer, lead):
    mine = client_with(api_token(viewer))
    created = mine.post(TOKENS, {"name": "nightly", "scopes": ["ingest"]}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert body["status"] == "active" and body["token"].startswith("rt_")
    others = client_with(api_token(lead))
    assert others.delete(f"{TOKENS}{body['id']}/").status_code == 404  # someone else's
    assert {t["name"] for t in others.get(TOKENS).json()["results"]} == {"test"}
    assert mine.delete(f"{TOKENS}{body['id']}/").status_code == 204
    again = mine.delete(f"{TOKENS}{body['id']}/")
    assert again.status_code == 409 and "revoked already" in again.json()["detail"]
    assert client_with(body["token"]).get(ME).status_code == 401
    token = ApiToken.objects.get(pk=body["id"])
    assert [t.action for t in transitions_for(token)] == ["token_create", "token_revoke"]


def test_delete_me_revokes_the_callers_token_only(viewer):
    kept, ended = api_token(viewer), api_token(viewer, "ingest")
    assert client_with(ended).delete(ME).status_code == 204  # any scope may end itself
    refused = client_with(ended).get(ME)
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    assert client_with(kept).get(ME).status_code == 200


def test_delete_me_without_a_token_names_the_header(as_user, viewer):
    response = as_user(viewer).delete(ME)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "Authorization"


def test_a_password_change_revokes_every_token_at_once(viewer, lead):
    secrets = [api_token(viewer), api_token(viewer, "ingest"), sign_in()["token"]]
    other = api_token(lead)
    viewer.set_password("a-whole-new-secret-42")
    viewer.save()
    for secret in secrets:
        response = client_with(secret).get(ME)
        assert response.status_code == 401 and "revoked" in response.json()["detail"]
    assert client_with(other).get(ME).status_code == 200
    assert client_with(sign_in(password="a-whole-new-secret-42")["token"]).get(ME).status_code == 200


def test_a_sign_in_that_upgrades_the_password_hash_keeps_the_tokens(viewer, settings):
    secret = api_token(viewer)
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    assert viewer.check_password(PASSWORD)  # rehashed with PBKDF2 and saved: no password change
    assert viewer.password.startswith("pbkdf2_")
    assert client_with(secret).get(ME).status_code == 200


def test_deactivation_by_sql_is_seen_by_the_next_request(viewer):
    secret = api_token(viewer)
    assert client_with(secret).get(ME).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("UPDATE auth_user SET is_active = false WHERE id = %s", [viewer.pk])
    assert client_with(secret).get(ME).status_code == 401
    with connection.cursor() as cursor:
        cursor.execute("UPDATE auth_user SET is_active = true WHERE id = %s", [viewer.pk])
    assert client_with(secret).get(ME).status_code == 200


def test_one_query_authenticates(viewer):
    client = client_with(api_token(viewer))
    client.get(TOKENS)  # last_used_at written once
    with CaptureQueriesContext(connection) as captured:
        assert client.get(ME).status_code == 200
    auth = [q["sql"] for q in captured.captured_queries if '"core_apitoken"' in q["sql"]]
    assert len(auth) == 1 and '"auth_user"' in auth[0]  # the user joined, is_active read afresh


def test_last_used_is_written_at_most_once_a_minute(viewer):
    client = client_with(api_token(viewer))
    client.get(ME)
    first = ApiToken.objects.get().last_used_at
    assert first is not None
    client.get(ME)
    assert ApiToken.objects.get().last_used_at == first


def test_unknown_and_malformed_tokens_are_401(viewer):
    assert client_with("rt_nope").get(ME).status_code == 401
    assert client_with("two words").get(ME).status_code == 401


def test_service_refuses_someone_elses_token(viewer, lead):
    token = api_token_create(actor=viewer, name="mine", scopes=["read"]).token
    with pytest.raises(PermissionDenied):
        api_token_revoke(actor=lead, token=token)
    assert ApiToken.objects.get(pk=token.pk).status == "active"


def test_no_cache_keeps_an_answer_that_shows_a_secret(viewer, client):
    """The sign-in's token, a token made through the API, and the tokens page that shows a new one."""
    signed_in = APIClient().post(LOGIN, {"username": "viewer", "password": PASSWORD}, format="json")
    made = client_with(signed_in.json()["token"]).post(
        TOKENS, {"name": "ci", "scopes": ["read"]}, format="json"
    )
    client.force_login(viewer)
    page = client.post("/account/tokens/", {"name": "nightly", "scopes": ["read"], "expires_in_days": 30})
    for response in (signed_in, made, page):
        assert response.status_code in (200, 201)
        assert "no-store" in response["Cache-Control"]


def test_tokens_ended_longer_ago_than_the_keep_days_are_purged_daily(viewer, settings):
    from core.services.api_tokens import api_tokens_purge

    settings.API_TOKEN_KEEP_DAYS = 30
    now = timezone.now()
    ages = {"expired long ago": 31, "expired lately": 29, "revoked long ago": 31, "revoked lately": 29}
    tokens = {}
    for name, days in ages.items():
        token = tokens[name] = api_token_create(actor=viewer, name=name, scopes=["read"]).token
        ended = now - timedelta(days=days)
        if name.startswith("expired"):
            ApiToken.objects.filter(pk=token.pk).update(
                created_at=ended - timedelta(days=1), expires_at=ended
            )
        else:
            api_token_revoke(actor=viewer, token=token)
            ApiToken.objects.filter(pk=token.pk).update(revoked_at=ended)
    live = api_token_create(actor=viewer, name="live", scopes=["read"]).token
    assert api_tokens_purge(now=now) == 2
    assert set(ApiToken.objects.values_list("name", flat=True)) == {
        "expired lately",
        "revoked lately",
        live.name,
    }
    # The purged token's audit rows stay: who made and who revoked it.
    assert [t.action for t in transitions_for(tokens["revoked long ago"]).order_by("at", "pk")][-1] == (
        "token_revoke"
    )
    assert settings.CELERY_BEAT_SCHEDULE["api-tokens-purge"]["task"] == "core.tasks.api_tokens_purge"
