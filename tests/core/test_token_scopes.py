"""Token scopes, decided in one place (core/api/permissions.py): every operation of the schema called
with a token of each scope is refused with a 403 naming the scope it needs, or gets past the scope."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.db import transaction
from rest_framework.test import APIClient

from core.roles import FRAMEWORK_ENGINEERS, METRIC_OWNERS, PROGRAM_LEADS
from tests.conftest import api_token, make_user
from tests.core.test_role_matrix_api import schema_operations

pytestmark = pytest.mark.django_db
SCOPE_REFUSAL = re.compile(r"needs a token with the `([a-z-]+)` scope")
INGEST = {("POST", "/api/v1/observations/batch/"), ("POST", "/otlp/v1/metrics")}
FREEZE_CHECK = {("GET", "/api/v1/freeze/check/")}
ALERTS = {("POST", "/api/v1/incidents/alertmanager/")}
ANY = {("DELETE", "/api/v1/auth/me/")}
PUBLIC = {("POST", "/api/v1/auth/token/")}


def needed(method: str, path: str) -> str | None:
    """The scope the table says each operation needs (None: any token)."""
    if (method, path) in ANY:
        return None
    if (method, path) in INGEST:
        return "ingest"
    if (method, path) in FREEZE_CHECK:
        return "freeze-check"
    if (method, path) in ALERTS:
        return "alerts"
    return "read" if method == "GET" else "full"


COVERS = {
    "full": {"ingest", "freeze-check", "read", "full", "alerts"},
    "read": {"read", "freeze-check"},
    "ingest": {"ingest"},
    "freeze-check": {"freeze-check"},
    "alerts": {"alerts"},
}


@pytest.fixture
def everyone() -> User:
    user = make_user("all-roles", PROGRAM_LEADS, FRAMEWORK_ENGINEERS, METRIC_OWNERS)
    user.user_permissions.add(Permission.objects.get(codename="add_observation"))
    Group.objects.get_or_create(name="training-platform")
    return user


@pytest.mark.parametrize("scope", sorted(COVERS))
def test_every_operation_keeps_to_the_tokens_scope(everyone, scope):
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token(everyone, scope)}")
    problems = []
    for method, path in sorted(schema_operations() - PUBLIC):
        url = re.sub(r"\{\w+\}", "999999", path)
        with transaction.atomic():
            response = client.generic(method, url, b"{}", content_type="application/json")
            transaction.set_rollback(True)
        body = response.json() if response.get("Content-Type", "").startswith("application/json") else {}
        detail = body.get("detail", "") if isinstance(body, dict) else ""
        refused = SCOPE_REFUSAL.search(detail)
        need = needed(method, path)
        if need is None or need in COVERS[scope]:
            if refused or response.status_code == 401:
                problems.append(f"{method} {path}: refused ({response.status_code} {detail})")
        elif response.status_code != 403 or not refused or refused.group(1) != need:
            problems.append(f"{method} {path}: {response.status_code} {detail!r}, expected 403 naming {need}")
    assert problems == []


def test_an_ingest_token_reading_programs_is_told_it_needs_read(ingest_user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token(ingest_user, 'ingest')}")
    response = client.get("/api/v1/programs/")
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert "`read`" in response.json()["detail"] and "ingest" in response.json()["detail"]
    marked = client.post("/api/v1/notifications/read-all/")
    assert marked.status_code == 403 and "`full`" in marked.json()["detail"]


def test_session_users_are_not_held_to_scopes(client, viewer):
    client.force_login(viewer)
    assert client.get("/api/v1/programs/").status_code == 200
