"""The freeze check (API and command), levels, import/export, frontier windows, query counts."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.models import Transition
from freeze.management.commands.freeze_check import describe
from freeze.models import Component, FreezeEntry, FreezeException, FreezeWindow
from freeze.selectors import freeze_check
from program.models import Phase
from tests.conftest import api_token, subprocess_database_url
from tests.core.test_settings_and_health import PRODUCTION_ENV
from tests.freeze.factories import freeze_setup, submitted_exception

CHECK = "/api/v1/freeze/check/"


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


@pytest.mark.parametrize(
    ("component", "decision"),
    [("kernels", "forbidden"), ("trainer", "needs_approval"), ("dashboards", "allowed")],
)
def test_check_answers_per_level(as_user, viewer, ref, component, decision):
    body = as_user(viewer).get(CHECK, {"component": component}).json()
    assert body["decision"] == decision
    assert body["window"]["name"] == "Wave 2"


def test_outside_every_window_everything_is_allowed(as_user, viewer, ref):
    later = (timezone.now() + timedelta(days=60)).isoformat()
    body = as_user(viewer).get(CHECK, {"component": "kernels", "at": later}).json()
    assert (body["decision"], body["window"]) == ("allowed", None)


def test_check_input_errors(as_user, viewer, api, ref):
    unknown = as_user(viewer).get(CHECK, {"component": "nope"})
    assert unknown.status_code == 400
    assert [e["field"] for e in unknown.json()["errors"]] == ["component"]
    with_at = as_user(viewer).get(CHECK, {"component": "nope", "at": timezone.now().isoformat()})
    assert (with_at.status_code, with_at.json()["errors"][0]["field"]) == (400, "component")
    assert as_user(viewer).get(CHECK, {}).json()["errors"][0]["field"] == "component"
    assert (
        as_user(viewer).get(CHECK, {"component": "trainer", "at": "soon"}).json()["errors"][0]["field"]
        == "at"
    )
    assert api.get(CHECK, {"component": "trainer"}).status_code == 401


def test_check_with_a_token_as_a_pipeline_would(api, viewer, ref):
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token(viewer, 'freeze-check')}")
    assert api.get(CHECK, {"component": "dashboards"}).json()["decision"] == "allowed"


@pytest.mark.parametrize(
    ("component", "code"), [("dashboards", 0), ("trainer", 1), ("kernels", 1), ("nope", 2)]
)
def test_command_exit_codes(ref, component, code):
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("freeze_check", component, stdout=out, stderr=io.StringIO())
    assert exit_info.value.code == code


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("settings_module", ["config.settings.local", "config.settings.production"])
def test_the_command_prints_only_its_answer(lead, settings_module):
    """What CI logs capture: stdout is the answer's lines and nothing else (no "AXES: BEGIN …" banner,
    no log line even at DEBUG: logs go to stderr), so a pipeline can read it."""
    freeze_setup(lead)
    at = timezone.now()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings_module, "LOG_LEVEL": "DEBUG"}
    if settings_module.endswith("production"):
        env.update({k: v for k, v in PRODUCTION_ENV.items() if k not in ("PATH", "CELERY_BROKER_URL")})
        env["CACHE_URL"] = "locmemcache://"
    env["DATABASE_URL"] = subprocess_database_url()
    result = subprocess.run(
        [sys.executable, "manage.py", "freeze_check", "kernels", "--at", at.isoformat()],
        capture_output=True,
        text=True,
        env=env,
        cwd=settings.BASE_DIR,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    expected = describe(freeze_check(Component.objects.get(key="kernels"), at))
    assert result.stdout.splitlines() == expected, result.stdout
    assert "AXES" not in result.stdout + result.stderr, result.stderr


def test_command_rejects_a_naive_at(ref):
    with pytest.raises(SystemExit) as exit_info:
        call_command("freeze_check", "trainer", "--at", "2026-12-01T10:00", stderr=io.StringIO())
    assert exit_info.value.code == 2


def test_overlapping_windows_take_the_strictest_level(as_user, viewer, ref):
    FreezeWindow.objects.create(
        program=ref["program"],
        name="Hard freeze",
        starts_at=ref["now"] - timedelta(hours=1),
        ends_at=ref["now"] + timedelta(days=1),
        default_level="frozen",
    )
    assert as_user(viewer).get(CHECK, {"component": "dashboards"}).json()["decision"] == "forbidden"


def test_levels_are_set_by_leads_with_history(as_user, lead, engineer, ref):
    url = f"/api/v1/freeze/windows/{ref['window'].pk}/levels/"
    assert as_user(engineer).post(url, {"levels": {"trainer": "frozen"}}, format="json").status_code == 403
    bad = as_user(lead).post(url, {"levels": {"trainer": "closed", "ghost": "open"}}, format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"levels.trainer", "levels.ghost"}
    ok = as_user(lead).post(url, {"levels": {"trainer": "frozen"}, "reason": "incident"}, format="json")
    assert {r["component"]: r["level"] for r in ok.json()}["trainer"] == "frozen"
    level_changes = Transition.objects.filter(action="level").order_by("id")
    assert level_changes.last().data == {"component": "trainer", "explicit": True}
    assert (level_changes.last().from_state, level_changes.last().to_state) == ("approval", "frozen")
    assert FreezeEntry.objects.get(component__key="trainer").events.count() >= 1


def test_export_and_import_csv_and_yaml(as_user, lead, ref):
    client = as_user(lead)
    url = f"/api/v1/freeze/windows/{ref['window'].pk}/levels/"
    exported = client.get(url, {"export": "csv"})
    text = exported.content.decode()
    assert "kernels,training_framework,training-platform,frozen" in text
    from django.core.files.uploadedfile import SimpleUploadedFile

    changed = text.replace(
        "kernels,training_framework,training-platform,frozen",
        "kernels,training_framework,training-platform,approval",
    )
    response = client.post(f"{url}import/", {"file": SimpleUploadedFile("levels.csv", changed.encode())})
    assert response.status_code == 200, response.content
    # approval is the window's default: the component follows it again, with no entry of its own.
    assert not FreezeEntry.objects.filter(component__key="kernels").exists()
    yaml_text = client.get(url, {"export": "yaml"}).content.decode().replace("level: open", "level: frozen")
    client.post(f"{url}import/", {"file": SimpleUploadedFile("levels.yaml", yaml_text.encode())})
    assert FreezeEntry.objects.get(component__key="dashboards").level == "frozen"
    broken = client.post(f"{url}import/", {"file": SimpleUploadedFile("x.yaml", b"levels: [1, 2]")})
    assert broken.status_code == 400 and broken.json()["errors"][0]["field"] == "file"


def test_frontier_phase_gets_a_window_that_follows_it(lead, django_capture_on_commit_callbacks):
    from program.services import phase_replan
    from tests.program.factories import make_program, metrics_for_template

    metrics_for_template()
    with django_capture_on_commit_callbacks(execute=True):
        program = make_program(lead)
    window = FreezeWindow.objects.get(program=program)
    frontier = Phase.objects.get(program=program, kind="frontier")
    assert window.phase == frontier and window.default_level == "approval"
    assert window.starts_at.date() == frontier.planned_start
    with django_capture_on_commit_callbacks(execute=True):
        phase_replan(
            actor=lead,
            phase=frontier,
            planned_start=frontier.planned_start + timedelta(days=14),
            planned_end=frontier.planned_end + timedelta(days=14),
            reason="slip",
            confirm_overlap_or_gap=True,
        )
    window.refresh_from_db()
    assert window.starts_at.date() == frontier.planned_start + timedelta(days=14)


@pytest.mark.parametrize(
    "path", ["/freeze/", "check", "/api/v1/freeze-exceptions/", "exception page", "/freeze/queues/"]
)
def test_constant_queries(client, lead, engineer, ref, path):

    client.force_login(lead)

    def grow(n):
        for i in range(n):
            component = Component.objects.create(key=f"c{n}-{i}", name="c", layer="storage", owner_team="t")
            FreezeEntry.objects.create(window=ref["window"], component=component, level="approval")
            submitted_exception(engineer, component, ref["now"])

    grow(1)
    first = FreezeException.objects.order_by("id").first()
    target = {"check": f"{CHECK}?component=trainer", "exception page": f"/freeze/exceptions/{first.pk}/"}.get(
        path, path
    )

    def count():
        client.get(target)
        with CaptureQueriesContext(connection) as context:
            assert client.get(target).status_code == 200
        return len(context.captured_queries)

    small = count()
    grow(10)
    assert count() == small
