"""A smoke run of the demo on the cluster: the demo loads (its programs, metrics, observations, rollups
and gate evaluations), and its pages and reads answer, as a lead and as the platform admin see them."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from metrics.models import MetricDefinition, Observation, ObservationRollup
from program.models import Gate, Program
from program.policies import led_program_ids
from tests.core.matrix_world import built_once

pytestmark = pytest.mark.citus_only


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker):
    with built_once(django_db_blocker):
        call_command("load_demo", stdout=io.StringIO())
        yield


def signed_in(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


@pytest.mark.django_db
def test_the_demo_loads_its_observations_onto_the_shards(demo):
    assert Observation.objects.count() > 0
    assert ObservationRollup.objects.count() > 0
    assert Gate.objects.filter(evaluations__isnull=False).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("username", ["lead", "platform"])
def test_the_demo_pages_answer(demo, username):
    client = signed_in(username)
    user = User.objects.get(username=username)
    # The platform admin reads every program; a lead, the ones they lead (the demo has a private one).
    programs = (
        Program.objects.all()
        if username == "platform"
        else Program.objects.filter(pk__in=led_program_ids(user))
    )
    pages = ["/", "/programs/", "/metrics/", "/metrics/feeds/", "/freeze/", "/incidents/", "/search/?q=step"]
    pages += [f"/programs/{program.slug}/" for program in programs]
    pages += [f"/programs/gates/{gate.pk}/" for gate in Gate.objects.filter(phase__program__in=programs)[:6]]
    pages += [f"/metrics/{d.key}/" for d in MetricDefinition.objects.filter(status="active")[:6]]
    answers = {page: client.get(page).status_code for page in pages}
    assert {page: code for page, code in answers.items() if code != 200} == {}


@pytest.mark.django_db
def test_the_demo_reads_answer_through_the_api(demo):
    client = signed_in("lead")
    observations = client.get("/api/v1/observations/")
    assert observations.status_code == 200, observations.content[:300]
    assert observations.json()["results"]
