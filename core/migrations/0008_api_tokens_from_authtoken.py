"""Issue 25: the old single tokens (rest_framework.authtoken, whose table held each key in clear) become
ApiTokens: scope `full`, expiring API_TOKEN_DAYS after this migration runs, stored only as the key's
SHA-256, so every old key keeps working until then. Then the old table is dropped, keys and all, with
authtoken's rows in django_migrations (so the app could be installed afresh).

authtoken is no longer in INSTALLED_APPS, so this cannot depend on its migrations and reads the table
with SQL, if it is there: on a database migrated before, authtoken's migrations have run and the table
exists; on a fresh database it never existed and there is nothing to carry over.
Not reversible in any useful way: the keys are gone once hashed, by design.
"""

import hashlib
from datetime import timedelta

from django.conf import settings
from django.db import migrations
from django.utils import timezone

NAME = "token from before named tokens"
TABLE = "authtoken_token"


def tokens_carry_over(apps, schema_editor):
    connection = schema_editor.connection
    if TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("core", "ApiToken")
    expires_at = timezone.now() + timedelta(days=settings.API_TOKEN_DAYS)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id, created FROM {TABLE}")
        rows = cursor.fetchall()
    ApiToken.objects.bulk_create(
        ApiToken(
            user_id=user_id,
            name=NAME,
            prefix=key[:8],
            digest=hashlib.sha256(key.encode()).hexdigest(),
            scopes=["full"],
            created_at=created,
            expires_at=expires_at,
        )
        for key, user_id, created in rows
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {TABLE}")
        cursor.execute("DELETE FROM django_migrations WHERE app = 'authtoken'")


class Migration(migrations.Migration):
    dependencies = [("core", "0007_api_token")]

    operations = [migrations.RunPython(tokens_carry_over, migrations.RunPython.noop, elidable=False)]
