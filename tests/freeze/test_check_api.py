"""The freeze check CI calls (`GET /api/v1/freeze/check/`): the selector's one rule, a constant number
of queries however many windows there are, and every change seen by the very next check."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from core.api.plain_json import plain
from freeze import services
from freeze.api.check import CheckOutput, check_as_dict
from freeze.models import Component, FreezeEntry, FreezeException, FreezeOverride, FreezeWindow
from freeze.selectors import freeze_check
from tests.conftest import api_token
from tests.freeze.factories import freeze_setup, submitted_exception

CHECK = "/api/v1/freeze/check/"
render = JSONRenderer().render


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


@pytest.fixture
def ci(viewer):
    """A CI job: token authentication, as pipelines call it."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token(viewer, 'freeze-check')}")
    return client


def decision(client, component="trainer", **params) -> dict:
    response = client.get(CHECK, {"component": component, **params})
    assert response.status_code == 200, response.content
    return response.json()


def test_a_check_reads_the_same_queries_for_few_and_many_windows(ci, ref):
    def queries() -> int:
        with CaptureQueriesContext(connection) as context:
            decision(ci)
        return len(context.captured_queries)

    decision(ci)  # the token's last use is written from here on at most once a minute
    few = queries()
    for n in range(8):
        window = FreezeWindow.objects.create(
            program=ref["program"],
            name=f"w{n}",
            starts_at=ref["now"] - timedelta(hours=1),
            ends_at=ref["now"] + timedelta(days=1),
        )
        FreezeEntry.objects.create(window=window, component=ref["trainer"], level="approval")
    # the token (one lookup, not cached: issue 25), component, windows, levels, override, exception
    assert queries() == few == 6


def test_a_level_change_is_seen_by_the_next_check(ci, ref, lead):
    assert decision(ci)["decision"] == "needs_approval"
    services.freeze_levels_set(actor=lead, window=ref["window"], levels={"trainer": "frozen"})
    assert decision(ci)["decision"] == "forbidden"
    services.freeze_levels_set(actor=lead, window=ref["window"], levels={"trainer": "approval"})
    assert decision(ci)["decision"] == "needs_approval"


def test_a_new_moved_or_deleted_window_is_seen_by_the_next_check(ci, ref):
    assert decision(ci, "dashboards")["decision"] == "allowed"
    window = FreezeWindow.objects.create(
        program=ref["program"],
        name="Hard freeze",
        starts_at=ref["now"] - timedelta(minutes=5),
        ends_at=ref["now"] + timedelta(days=1),
        default_level="frozen",
    )
    assert decision(ci, "dashboards")["decision"] == "forbidden"
    window.starts_at = ref["now"] + timedelta(hours=2)
    window.save()
    assert decision(ci, "dashboards")["decision"] == "allowed"
    window.delete()
    assert [w["name"] for w in decision(ci, "dashboards")["windows"]] == ["Wave 2"]


def test_an_override_is_seen_by_the_next_check(ci, ref, lead):
    assert decision(ci, "kernels")["decision"] == "forbidden"
    override = services.override_open(
        actor=lead, component=ref["kernels"], reason="hotfix", ends_at=ref["now"] + timedelta(hours=3)
    )
    body = decision(ci, "kernels")
    assert body["decision"] == "allowed" and body["override"]["id"] == override.pk


def test_exception_approval_and_revocation_are_seen_by_the_next_check(
    ci, ref, engineer, component_owner, lead
):
    now = ref["now"]
    exception = submitted_exception(engineer, ref["trainer"], now)
    at = (now + timedelta(hours=1, minutes=30)).isoformat()
    assert decision(ci, at=at)["decision"] == "needs_approval"
    services.exception_approve(actor=component_owner, exception=exception)
    assert decision(ci, at=at)["exception"]["id"] == exception.pk
    services.exception_revoke(actor=lead, exception=exception, reason="no longer safe")
    assert decision(ci, at=at)["decision"] == "needs_approval"


def test_a_new_component_and_a_renamed_program_are_seen_by_the_next_check(ci, ref):
    unknown = ci.get(CHECK, {"component": "fresh"})
    assert (unknown.status_code, unknown.json()["errors"][0]["field"]) == (400, "component")
    Component.objects.create(key="fresh", name="fresh", layer="tooling", owner_team="x")
    assert decision(ci, "fresh")["level"] == "approval"
    assert decision(ci, "fresh", program=ref["program"].slug)["program"] == ref["program"].slug
    ref["program"].slug = "renamed"
    ref["program"].save()
    assert ci.get(CHECK, {"component": "fresh", "program": "rebuild"}).status_code == 400
    assert decision(ci, "fresh", program="renamed")["windows"][0]["program"] == "renamed"


def test_a_bulk_update_is_seen_by_the_next_check(ci, ref):
    assert decision(ci, "kernels")["decision"] == "forbidden"
    FreezeEntry.objects.filter(component=ref["kernels"]).update(level="open")
    assert decision(ci, "kernels")["decision"] == "allowed"


def test_an_unreachable_cache_answers_from_the_database(ci, ref, monkeypatch):
    from redis.exceptions import ConnectionError as RedisConnectionError

    def refuse(*args, **kwargs):
        raise RedisConnectionError("cache down")

    for name in ("get", "get_many", "set", "add"):
        monkeypatch.setattr(cache, name, refuse)
    assert decision(ci, "kernels")["decision"] == "forbidden"


def test_the_answer_renders_as_its_schema_at_every_moment(ref, lead, engineer, component_owner):
    """Windows, recurrences, overrides and exceptions that begin and end inside the hour: at random
    moments, what the view sends (plain JSON, no serializer) renders as the schema's serializer would."""
    now = ref["now"].replace(minute=0, second=0, microsecond=0)
    program = ref["program"]
    trainer = ref["trainer"]
    FreezeWindow.objects.create(
        program=program, name="short", starts_at=now + timedelta(minutes=10), ends_at=now + timedelta(minutes=40),
        default_level="frozen",
    )  # fmt: skip
    nightly = FreezeWindow.objects.create(
        program=program, name="daily 20 minutes", starts_at=now - timedelta(days=3, minutes=-25),
        ends_at=now + timedelta(days=3), default_level="open", rrule="FREQ=DAILY", timezone="Europe/Berlin",
        occurrence_duration=timedelta(minutes=20),
    )  # fmt: skip
    FreezeEntry.objects.create(window=nightly, component=trainer, level="frozen")
    late = FreezeWindow.objects.create(
        program=program, name="season starts mid-hour", starts_at=now + timedelta(minutes=33),
        ends_at=now + timedelta(days=2), default_level="approval", rrule="FREQ=DAILY", timezone="UTC",
        occurrence_duration=timedelta(minutes=7),
    )  # fmt: skip
    FreezeEntry.objects.create(window=late, component=ref["dashboards"], level="frozen")
    FreezeOverride.objects.create(
        component=trainer, opened_by=lead, reason="r", starts_at=now + timedelta(minutes=50),
        ends_at=now + timedelta(minutes=55),
    )  # fmt: skip
    FreezeException.objects.create(
        component=trainer, window=ref["window"], requester=engineer, last_editor=engineer, title="t",
        change="c", justification="j", risk="low", rollback_plan="r", status="approved",
        change_starts_at=now + timedelta(minutes=5), change_ends_at=now + timedelta(minutes=45),
    )  # fmt: skip
    rng = random.Random(7)
    moments = [now + timedelta(seconds=rng.randint(0, 3599)) for _ in range(60)]
    moments += [now + timedelta(minutes=m) for m in (0, 5, 10, 25, 40, 45, 50, 55)]
    for component in Component.objects.all():
        for scope in (None, program):
            for moment in moments:
                answer = check_as_dict(freeze_check(component, moment, scope))
                assert render(plain(answer)) == render(CheckOutput(answer).data), (component, moment)
