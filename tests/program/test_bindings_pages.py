"""The new-program page's slot pickers, the program page's Bindings panel and its form, the gate
page's "needs a metric", and their query counts."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.models import Transition
from metrics.models import System, Workload
from program import services
from program.models import Criterion, Gate, Program
from tests.metrics.factories import definition
from tests.program.factories import metrics_for_template

FORM = {
    "slug": "own",
    "name": "Own",
    "start_date": "2026-01-01",
    "baseline": "legacy",
    "candidate": "rebuilt",
    "template": "rebuild-14m",
}


@pytest.fixture
def bare(db):
    """Systems only: none of the template's metrics or workloads."""
    System.objects.create(key="legacy", name="Legacy")
    System.objects.create(key="rebuilt", name="Rebuilt")


def unbound_program(lead) -> Program:
    return services.program_create(
        actor=lead,
        slug="own",
        name="Own",
        start_date=FORM_DATE,
        baseline=System.objects.get(key="legacy"),
        candidate=System.objects.get(key="rebuilt"),
    )


FORM_DATE = __import__("datetime").date(2026, 1, 1)


def test_new_program_page_offers_a_picker_per_slot_with_the_suggestion_chosen(client, lead, db):
    metrics_for_template()
    client.force_login(lead)
    html = client.get("/programs/new/").content.decode()
    for slot in ("throughput", "step_time", "scaling_efficiency", "canary_workload", "large_workload"):
        assert f'name="slot_{slot}"' in html
    assert '<option value="training-throughput" selected>training-throughput@1' in html
    assert '<option value="llm-pretrain-70b" selected>' in html
    assert "— leave unbound —" in html


def test_new_program_page_creates_with_chosen_and_unbound_slots(client, lead, db):
    ref = metrics_for_template()
    definition(key="tokens-per-sec", unit="token/s", direction="higher_is_better", statistic="mean")
    client.force_login(lead)
    response = client.post(
        "/programs/new/",
        {
            **FORM,
            "slot_throughput": "tokens-per-sec",
            "slot_step_time": "",
            "slot_canary_workload": "vision-small",
        },
    )
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert {c.metric.key for c in Criterion.objects.filter(slot="throughput")} == {"tokens-per-sec"}
    assert Criterion.objects.get(slot="step_time").metric is None  # "leave unbound" chosen
    assert Criterion.objects.get(slot="scaling_efficiency").metric is None  # not posted: unbound too
    assert {c.workload for c in Criterion.objects.filter(workload_slot="canary_workload")} == {
        Workload.objects.get(key="vision-small")
    }
    assert ref["step"] not in {c.metric for c in Criterion.objects.all()}


def test_new_program_page_on_an_empty_registry_creates_every_gate(client, lead, bare):
    client.force_login(lead)
    html = client.get("/programs/new/").content.decode()
    assert 'name="slot_throughput"' in html and '<option value="" selected>— leave unbound —' in html
    response = client.post("/programs/new/", FORM, follow=True)
    assert response.status_code == 200
    assert "Created Own from rebuild-14m." in response.content.decode()
    assert Gate.objects.filter(phase__program__slug="own", kind="exit").count() == 4


def test_bindings_panel_shows_slots_and_only_leads_get_the_form(client, lead, viewer, bare):
    unbound_program(lead)
    client.force_login(viewer)
    html = client.get("/programs/own/").content.decode()
    assert 'id="bindings"' in html and "scaling_efficiency" in html and "unbound" in html
    assert 'action="/programs/own/bindings/"' not in html
    client.force_login(lead)
    assert 'action="/programs/own/bindings/"' in client.get("/programs/own/").content.decode()


def test_lead_binds_a_slot_on_the_program_page(client, lead, bare):
    unbound_program(lead)
    definition(key="tokens-per-sec", unit="token/s", direction="higher_is_better", statistic="mean")
    client.force_login(lead)
    response = client.post(
        "/programs/own/bindings/", {"slot": "throughput", "key": "tokens-per-sec"}, follow=True
    )
    html = response.content.decode()
    assert "Bound throughput to tokens-per-sec@1: 3 criteria updated." in html
    assert '<span class="badge active mono">tokens-per-sec@1</span>' in html
    assert Transition.objects.filter(action="bound", actor=lead).count() == 1


def test_binding_an_unknown_key_on_the_page_says_so(client, lead, bare):
    unbound_program(lead)
    client.force_login(lead)
    response = client.post("/programs/own/bindings/", {"slot": "throughput", "key": "nope"}, follow=True)
    assert "throughput was not bound: Unknown metric &#x27;nope&#x27;." in response.content.decode()
    assert not Criterion.objects.filter(metric__isnull=False).exists()


def test_a_viewer_forcing_a_bind_gets_the_styled_403(client, viewer, lead, bare):
    unbound_program(lead)
    definition(key="tokens-per-sec")
    client.force_login(viewer)
    response = client.post("/programs/own/bindings/", {"slot": "throughput", "key": "tokens-per-sec"})
    assert response.status_code == 403
    assert (
        "Only a lead of program &#x27;own&#x27; or a platform admin may bind template slots."
        in response.content.decode()
    )
    assert not Criterion.objects.filter(metric__isnull=False).exists()


def test_gate_page_says_which_slot_a_criterion_needs(client, viewer, lead, bare):
    unbound_program(lead)
    gate = Gate.objects.get(phase__kind="canary", kind="exit")
    services.gate_evaluate(gate=gate)
    client.force_login(viewer)
    html = client.get(f"/programs/gates/{gate.pk}/").content.decode()
    assert "needs a metric (slot throughput)" in html
    assert "needs a workload (slot canary_workload)" in html
    assert "Needs a metric: slot &#x27;throughput&#x27; is not bound" in html


def count(client, path) -> int:
    client.get(path)
    with CaptureQueriesContext(connection) as context:
        response = client.get(path)
    assert response.status_code == 200
    return len(context.captured_queries)


@pytest.mark.parametrize("who", ["lead", "viewer"])
def test_program_page_with_the_bindings_panel_runs_constant_queries(client, request, lead, bare, who):
    program = unbound_program(lead)
    client.force_login(request.getfixturevalue(who))
    small = count(client, f"/programs/{program.slug}/")
    canary = Gate.objects.get(phase__kind="canary", kind="exit")
    for i in range(15):
        definition(key=f"metric-{i}")
        Workload.objects.create(key=f"workload-{i}", name=f"W{i}", size="medium", criticality="peripheral")
        Criterion.objects.create(
            gate=canary,
            name=f"extra {i}",
            kind="relative",
            threshold=1,
            slot="throughput",
            workload_slot="large_workload",
        )
    services.program_bind(
        actor=lead, program=program, bindings={"step_time": "metric-3", "canary_workload": "workload-2"}
    )
    large = count(client, f"/programs/{program.slug}/")
    assert large == small, f"{small} queries on small data, {large} on large"


@pytest.mark.parametrize("path", ["/programs/new/", "/api/v1/templates/"])
def test_new_program_page_and_templates_api_run_constant_queries(client, lead, bare, path):
    client.force_login(lead)
    small = count(client, path)
    for i in range(15):
        definition(key=f"metric-{i}")
        Workload.objects.create(key=f"workload-{i}", name=f"W{i}", size="medium", criticality="peripheral")
    definition(key="training-throughput")
    assert count(client, path) == small
