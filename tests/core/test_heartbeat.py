"""The heartbeat beat sends and a worker runs (core.heartbeat), and how /healthz reports it. The live
path, with a real beat and worker, is tests/core/test_run_topology.py."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from core.heartbeat import NAME, heartbeat_status
from core.models import Heartbeat
from core.tasks import heartbeat_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_broker(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    settings.HEARTBEAT_SECONDS = 30


def test_the_task_records_when_and_where_it_ran():
    heartbeat_record.delay()  # in-process here (no worker): the host is this machine's name
    first = Heartbeat.objects.get(name=NAME)
    assert first.worker
    assert timezone.now() - first.at < timedelta(seconds=5)
    heartbeat_record.delay()
    assert Heartbeat.objects.get().at > first.at  # one row, moved forward


def test_is_scheduled_by_beat(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["heartbeat-record"]
    assert entry["task"] == heartbeat_record.name
    assert entry["schedule"] == settings.HEARTBEAT_SECONDS


def test_without_a_broker_there_is_no_background_to_report(settings):
    settings.CELERY_BROKER_URL = ""
    assert heartbeat_status().startswith("not configured")


def test_before_the_first_beat_it_says_it_is_waiting(with_broker):
    assert heartbeat_status().startswith("waiting for the first heartbeat")


def test_a_recent_beat_means_alive(with_broker):
    Heartbeat.objects.create(name=NAME, at=timezone.now() - timedelta(seconds=40), worker="celery@box")
    assert heartbeat_status().startswith("ok: worker and beat alive, last heartbeat")
    assert "(40 s ago) run by celery@box" in heartbeat_status()


def test_three_missed_beats_mean_stale(with_broker):
    Heartbeat.objects.create(name=NAME, at=timezone.now() - timedelta(seconds=91), worker="celery@box")
    assert heartbeat_status().startswith("stale: worker or beat down")


def test_healthz_reports_a_stale_background_without_failing(client, with_broker, settings):
    settings.HEALTH_CHECK_BROKER = False  # the broker check is tested elsewhere; this one is about beats
    Heartbeat.objects.create(name=NAME, at=timezone.now() - timedelta(hours=1), worker="celery@box")
    response = client.get("/healthz")
    assert response.status_code == 200
    assert json.loads(response.content)["background"].startswith("stale")


def test_the_home_page_shows_whether_worker_and_beat_are_alive(client, lead, with_broker):
    Heartbeat.objects.create(name=NAME, at=timezone.now(), worker="celery@box")
    client.force_login(lead)
    html = client.get("/").content.decode()
    assert 'id="background">Background jobs: ok: worker and beat alive' in html
    assert "run by celery@box" in html
