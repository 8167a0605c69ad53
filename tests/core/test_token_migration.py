"""Migration core 0008: each old rest_framework.authtoken key keeps working, as a `full` token that
expires API_TOKEN_DAYS after the migration, stored only as its digest; the old table is dropped."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.apps import apps
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from core.models import ApiToken

pytestmark = pytest.mark.django_db
carry_over = importlib.import_module("core.migrations.0008_api_tokens_from_authtoken").tokens_carry_over
OLD_KEY = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"  # 40 hex digits, as DRF made them


def test_old_keys_keep_working_until_the_expiry_the_migration_set(viewer, settings):
    settings.API_TOKEN_DAYS = 90
    with connection.cursor() as cursor:
        # authtoken's table as its migrations left it (the app is no longer installed).
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamptz NOT NULL,"
            " user_id integer NOT NULL UNIQUE REFERENCES auth_user (id))"
        )
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, now(), %s)", [OLD_KEY, viewer.pk])
        cursor.execute(
            "INSERT INTO django_migrations (app, name, applied) VALUES ('authtoken', '0001_initial', now())"
        )
    with connection.schema_editor() as editor:
        carry_over(apps, editor)

    token = ApiToken.objects.get(user=viewer)
    assert token.scopes == ["full"] and token.prefix == OLD_KEY[:8]
    assert abs(token.expires_at - (timezone.now() + timedelta(days=90))) < timedelta(minutes=1)
    assert "authtoken_token" not in connection.introspection.table_names()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM django_migrations WHERE app = 'authtoken'")
        assert cursor.fetchone()[0] == 0
        cursor.execute("SELECT * FROM core_apitoken")
        assert OLD_KEY not in str(cursor.fetchall())

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {OLD_KEY}")
    assert client.get("/api/v1/auth/me/").json()["username"] == "viewer"
    ApiToken.objects.update(expires_at=timezone.now())
    assert client.get("/api/v1/auth/me/").status_code == 401


def test_a_fresh_database_has_nothing_to_carry_over():
    assert "authtoken_token" not in connection.introspection.table_names()
    with connection.schema_editor() as editor:
        carry_over(apps, editor)
    assert not ApiToken.objects.exists()
