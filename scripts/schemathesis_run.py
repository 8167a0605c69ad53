"""`make schemathesis`: check the whole OpenAPI schema against the running app.

Creates a fresh database next to DATABASE_URL's (named <db>_schemathesis, dropped first), migrates it,
loads the demo data, gives a user holding every role an API token, starts gunicorn on a free loopback port
and runs Schemathesis over every operation as that user with the three checks that hold the schema to the truth
(all but DELETE /api/v1/auth/me/ and DELETE /api/v1/tokens/{id}/, which could revoke the token the run uses). Path parameters are the
demo's own objects, so operations get past the lookup to their validation and rules.
Arguments after `--` (SCHEMATHESIS_ARGS in make) go to `schemathesis run`, e.g. `--max-examples 20`.
Exits with Schemathesis' exit code; the server is stopped and the database dropped in every case.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SERVER_LOG = ROOT / ".schemathesis" / "server.log"
CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance"

# Path parameters filled with objects of the demo data, so that every operation reaches its real work
# instead of answering 404 to made-up identifiers. Printed as {path regex: {parameter: value}}.
# The caller holds every role (and the ingest permission), so no operation stops at its 403 before its input
# is checked; it is not the demo's requester or editor, so separation of duties does not stop it either.
EVERY_ROLE_USER = """
from django.contrib.auth.models import Group, Permission, User
from core.services.api_tokens import api_token_create
user, _ = User.objects.get_or_create(username="schemathesis", defaults={"email": "schemathesis@localhost"})
user.groups.set(Group.objects.all())
user.user_permissions.add(Permission.objects.get(content_type__app_label="metrics", codename="add_observation"))
from core.notifications import notification_send
notification_send(event="welcome", subject="Welcome", body="An inbox entry to mark read.", link="/", users=[user])
print(api_token_create(actor=user, name="schemathesis", scopes=["full"]).secret)
"""

DEMO_IDENTIFIERS = """
import json
from freeze.models import FreezeException, FreezeOverride, FreezeWindow
from metrics.models import MetricDefinition, System, Workload
from program.models import Criterion, Gate, Phase, Program, WorkloadMigration
from core.models import NotificationReceipt

def first(model):
    return model.objects.order_by("pk").first()

definition = MetricDefinition.objects.order_by("key", "version").first()
print(json.dumps({
    "^/api/v1/programs/[{]slug[}]/": {"path.slug": first(Program).slug},
    "^/api/v1/phases/": {"path.id": first(Phase).pk},
    "^/api/v1/gates/[{]id[}]/": {"path.id": first(Gate).pk},
    "^/api/v1/criteria/": {"path.id": first(Criterion).pk},
    "^/api/v1/migrations/": {"path.id": first(WorkloadMigration).pk},
    "^/api/v1/definitions/[{]key[}]/": {"path.key": definition.key, "path.version": definition.version},
    "^/api/v1/freeze/windows/[{]id[}]/": {"path.id": first(FreezeWindow).pk},
    "^/api/v1/freeze-exceptions/[{]id[}]/": {"path.id": first(FreezeException).pk},
    "^/api/v1/freeze/overrides/[{]id[}]/": {"path.id": first(FreezeOverride).pk},
    "^/api/v1/systems/[{]key[}]/": {"path.key": first(System).key},
    "^/api/v1/workloads/[{]key[}]/": {"path.key": first(Workload).key},
    "^/api/v1/templates/[{]key[}]/": {"path.key": "rebuild-14m"},
    "^/api/v1/notifications/[{]id[}]/": {
        "path.id": NotificationReceipt.objects.filter(user__username="schemathesis").first().notification_id
    },
}))
"""


def fresh_database(url: str) -> str:
    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'rebuild_tracker'}_schemathesis"
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}"))


def drop_database(url: str) -> None:
    parts = urlsplit(url)
    with psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{parts.path.lstrip("/")}" WITH (FORCE)')


def write_config(identifiers: dict[str, dict[str, object]], directory: str) -> Path:
    """A schemathesis.toml with one [[operations]] entry per path pattern (JSON values are valid TOML)."""
    lines = []
    for pattern, parameters in identifiers.items():
        values = ", ".join(f'"{name}" = {json.dumps(value)}' for name, value in parameters.items())
        lines += ["[[operations]]", f"include-path-regex = '{pattern}'", f"parameters = {{ {values} }}", ""]
    path = Path(directory) / "schemathesis.toml"
    path.write_text("\n".join(lines))
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def manage(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        [sys.executable, "manage.py", *args], env=env, cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def wait_until_up(base: str, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit("gunicorn exited before answering")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    sys.exit(f"the app did not answer on {base} within {timeout:.0f} s")


def operation_id(base: str, path: str, method: str) -> str:
    with urllib.request.urlopen(f"{base}/api/schema/?format=json", timeout=30) as response:
        return json.load(response)["paths"][path][method]["operationId"]


def main(extra: list[str]) -> int:
    database_url = fresh_database(os.environ["DATABASE_URL"])
    # The base settings, as production runs them but without TLS redirects; tasks run in-process.
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        # One token drives every request: with the per-user limit on, operations fuzzed late answered
        # mostly 429 and were not exercised. The limit has its own tests (tests/core/test_api_rate_limit.py).
        "API_RATE_LIMIT": "",
    }
    env.pop("CELERY_BROKER_URL", None)
    server = None
    workdir = tempfile.mkdtemp(prefix="schemathesis-")
    try:
        manage(env, "migrate", "--no-input", "-v0")
        # The base settings serve static files through their manifest, as deployed: without it, every HTML
        # page (the 404 of a probe path outside the API too) is a 500 in the server log.
        manage(env, "collectstatic", "--no-input", "-v0")
        manage(env, "load_demo")
        token = manage(env, "shell", "-c", EVERY_ROLE_USER).split()[-1]
        config = write_config(
            json.loads(manage(env, "shell", "-c", DEMO_IDENTIFIERS).splitlines()[-1]), workdir
        )
        # Tracebacks of any 500 land here (.schemathesis/ is git-ignored).
        SERVER_LOG.parent.mkdir(exist_ok=True)
        server_log = SERVER_LOG.open("w")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        # gunicorn with the deployed defaults: its own refusals (414 for a request line over 4,094 bytes,
        # which fuzzed query strings reach) are part of what the schema must declare (core/api/schema.py).
        server = subprocess.Popen(
            [BIN / "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "2"],
            env=env,
            cwd=ROOT,
            stdout=server_log,
            stderr=server_log,
        )
        wait_until_up(base, server)
        command = [
            BIN / "schemathesis",
            "--config-file",
            config,
            "run",
            f"{base}/api/schema/?format=json",
            "--url",
            base,
            "--header",
            f"Authorization: Token {token}",
            "--checks",
            CHECKS,
            # Revoking the caller's own token would turn every later request into a 401. Its id is read
            # from the schema: drf-spectacular derives ids from paths, so a hard-coded one goes stale.
            "--exclude-operation-id",
            operation_id(base, "/api/v1/auth/me/", "delete"),
            "--exclude-operation-id",
            operation_id(base, "/api/v1/tokens/{id}/", "delete"),
            *extra,
        ]
        print(f"server log: {SERVER_LOG}", flush=True)
        print("$", " ".join(str(part) for part in command).replace(token, "<token>"), flush=True)
        return subprocess.run(command, cwd=ROOT).returncode
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        drop_database(database_url)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
