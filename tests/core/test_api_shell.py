import pytest
from django.test import Client

from core.models import ApiToken
from core.services.api_tokens import token_digest
from tests.conftest import PASSWORD, api_token


def assert_error_shape(body):
    """The one API error shape (core/api/errors.py); each caller checks the status code itself."""
    assert set(body) >= {"detail", "code", "errors"}, body
    assert isinstance(body["detail"], str) and body["detail"]
    assert isinstance(body["code"], str) and body["code"]
    assert isinstance(body["errors"], list)


@pytest.mark.django_db
def test_token_exchange_then_token_auth(api, viewer):
    response = api.post("/api/v1/auth/token/", {"username": "viewer", "password": PASSWORD}, format="json")
    assert response.status_code == 200
    token = response.json()["token"]
    assert ApiToken.objects.get(user=viewer).digest == token_digest(token)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    me = api.get("/api/v1/auth/me/")
    assert me.status_code == 200
    assert me.json()["username"] == "viewer"


@pytest.mark.django_db
def test_token_exchange_with_wrong_password_is_400_naming_the_problem(api, viewer):
    response = api.post("/api/v1/auth/token/", {"username": "viewer", "password": "nope"}, format="json")
    assert response.status_code == 400
    assert_error_shape(response.json())
    assert "Unable to log in" in response.json()["detail"]


@pytest.mark.django_db
def test_token_exchange_missing_fields_names_them(api):
    response = api.post("/api/v1/auth/token/", {}, format="json")
    assert response.status_code == 400
    fields = {error["field"] for error in response.json()["errors"]}
    assert fields == {"username", "password"}


@pytest.mark.django_db
def test_anonymous_api_gets_401_in_the_error_shape(api):
    response = api.get("/api/v1/auth/me/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")
    assert_error_shape(response.json())
    assert response.json()["code"] == "not_authenticated"


@pytest.mark.django_db
def test_session_auth_reads_and_enforces_csrf_on_writes(viewer):
    client = Client(enforce_csrf_checks=True)
    client.force_login(viewer)
    assert client.get("/api/v1/auth/me/").status_code == 200
    api_token(viewer)
    token = ApiToken.objects.get(user=viewer)
    refused = client.delete(f"/api/v1/tokens/{token.pk}/")
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["detail"]
    assert ApiToken.objects.get(pk=token.pk).status == "active"
    client.get("/programs/")  # any page with a form sets the csrftoken cookie
    csrf = client.cookies["csrftoken"].value
    accepted = client.delete(f"/api/v1/tokens/{token.pk}/", HTTP_X_CSRFTOKEN=csrf)
    assert accepted.status_code == 204
    assert ApiToken.objects.get(pk=token.pk).status == "revoked"


@pytest.mark.django_db
def test_unknown_api_path_is_404_in_the_error_shape(as_user, viewer):
    response = as_user(viewer).get("/api/v1/no-such-thing/")
    assert response.status_code == 404
    assert_error_shape(response.json())


@pytest.mark.django_db
def test_wrong_method_is_405_in_the_error_shape(api):
    response = api.get("/api/v1/auth/token/")
    assert response.status_code == 405
    assert_error_shape(response.json())


@pytest.mark.urls("tests.core.error_views")
@pytest.mark.parametrize(
    ("kind", "status_code", "code", "field"),
    [
        ("validation", 400, "invalid", "size"),
        ("django-validation", 400, "invalid", "threshold"),
        ("forbidden", 403, "permission_denied", None),
        ("missing", 404, "not_found", None),
        ("conflict", 409, "conflict", None),
        ("unprocessable", 422, "unprocessable", "Idempotency-Key"),
        ("too-large", 413, "payload_too_large", None),
    ],
)
def test_every_error_has_one_shape(api, kind, status_code, code, field):
    response = api.post(f"/api/v1/raise/{kind}/", {"size": 0}, format="json")
    assert response.status_code == status_code
    body = response.json()
    assert_error_shape(body)
    assert body["code"] == code
    if field:
        assert field in {error["field"] for error in body["errors"]}


@pytest.mark.django_db
def test_schema_and_docs_are_public_and_offline(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"openapi" in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "swagger-ui" in html
    assert "cdn" not in html.lower()
