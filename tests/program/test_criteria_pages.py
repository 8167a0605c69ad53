"""The gate page's criterion forms: leads add, edit, delete and re-pin; nobody else sees or may post them."""

from __future__ import annotations

import pytest

from core.models import Transition
from program import services
from program.models import Criterion, Gate
from tests.program.factories import canary_gate
from tests.program.versioning import supersede

FORMS = ("Add criterion", "Save changes", "Delete criterion", "Re-pin to active versions")


def throughput() -> Criterion:
    return Criterion.objects.get(gate=canary_gate(), name__startswith="Throughput")


def page(client, user) -> str:
    client.force_login(user)
    return client.get(f"/programs/gates/{canary_gate().pk}/").content.decode()


def test_a_lead_sees_every_criterion_form(client, lead, ref):
    supersede(ref["step"])
    html = page(client, lead)
    for label in FORMS:
        assert label in html, label
    assert html.count("Save changes") == 3  # one edit form per criterion
    assert 'Step time on the canary workload ≥ 0.8× legacy: <span class="mono">step-time@1</span> → ' in html


@pytest.mark.parametrize("role", ["viewer", "engineer", "metric_owner"])
def test_anyone_else_sees_no_criterion_form(client, ref, role, request):
    supersede(ref["step"])
    html = page(client, request.getfixturevalue(role))
    for label in FORMS:
        assert label not in html, label
    assert "newer active version" in html  # still told the gate is stale


def test_a_decided_gate_shows_no_edit_forms_and_says_to_reopen(client, lead, ref):
    services.gate_decide(gate=canary_gate(), actor=lead, decision="fail", note="no")
    html = page(client, lead)
    assert "reopen it to change its criteria" in html
    for label in FORMS:
        assert label not in html, label


@pytest.mark.parametrize(
    ("path", "needed"),
    [
        (
            "gates/{gate}/criteria/",
            "Only a lead of program &#x27;rebuild&#x27; or a platform admin may add criteria.",
        ),
        (
            "criteria/{criterion}/edit/",
            "Only a lead of program &#x27;rebuild&#x27; or a platform admin may edit criteria.",
        ),
        (
            "criteria/{criterion}/delete/",
            "Only a lead of program &#x27;rebuild&#x27; or a platform admin may delete criteria.",
        ),
        (
            "gates/{gate}/repin/",
            "Only a lead of program &#x27;rebuild&#x27; or a platform admin may re-pin criteria.",
        ),
    ],
)
def test_a_forced_post_by_a_viewer_is_refused_on_a_styled_page(client, viewer, ref, path, needed):
    client.force_login(viewer)
    before = list(Criterion.objects.order_by("pk").values())
    url = "/programs/" + path.format(gate=canary_gate().pk, criterion=throughput().pk)
    response = client.post(url, {"new-name": "x", "new-kind": "manual", "new-min_samples": 30})
    assert response.status_code == 403
    html = response.content.decode()
    assert needed in html and 'class="topbar"' in html
    assert list(Criterion.objects.order_by("pk").values()) == before
    assert not Transition.objects.filter(action__startswith="criterion_").exists()


def test_a_lead_adds_a_criterion_and_is_told(client, lead, ref):
    client.force_login(lead)
    response = client.post(
        f"/programs/gates/{canary_gate().pk}/criteria/",
        {
            "new-name": "Step time p90 no worse",
            "new-kind": "relative",
            "new-metric": "step-time",
            "new-statistic": "p90",
            "new-operator": "gte",
            "new-threshold": "1.0",
            "new-min_samples": "30",
            "new-required": "on",
        },
        follow=True,
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "Added “Step time p90 no worse” and evaluated the gate again." in html
    added = Criterion.objects.get(name="Step time p90 no worse")
    assert (added.metric.ref, added.statistic, added.threshold) == ("step-time@1", "p90", 1.0)
    assert added.results.exists()  # evaluated at once


def test_a_refused_add_keeps_what_was_typed_and_names_the_field(client, lead, ref):
    client.force_login(lead)
    response = client.post(
        f"/programs/gates/{canary_gate().pk}/criteria/",
        {
            "new-name": "Typed name",
            "new-kind": "relative",
            "new-metric": "step-time",
            "new-operator": "gte",
            "new-min_samples": "30",
        },
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "A measured criterion needs a threshold." in html
    assert 'value="Typed name"' in html and '<details class="card add-criterion" open>' in html
    assert not Criterion.objects.filter(name="Typed name").exists()


def test_a_lead_edits_in_place_through_htmx(client, lead, ref):
    client.force_login(lead)
    target = throughput()
    response = client.post(
        f"/programs/criteria/{target.pk}/edit/",
        {
            f"c{target.pk}-name": target.name,
            f"c{target.pk}-kind": "relative",
            f"c{target.pk}-metric": "training-throughput@1",
            f"c{target.pk}-workload": "llm-finetune-8b",
            f"c{target.pk}-operator": "gte",
            f"c{target.pk}-threshold": "0.85",
            f"c{target.pk}-min_samples": "40",
            f"c{target.pk}-required": "on",
        },
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and f"Saved “{target.name}” and evaluated the gate again." in html
    target.refresh_from_db()
    assert (target.threshold, target.min_samples) == (0.85, 40)
    changes = Transition.objects.get(action="criterion_edited").data["changes"]
    assert changes == {"threshold": [0.8, 0.85], "min_samples": [30, 40]}


def test_a_refused_edit_reopens_its_form_with_the_reason(client, lead, ref):
    supersede(ref["step"])
    client.force_login(lead)
    target = throughput()
    response = client.post(
        f"/programs/criteria/{target.pk}/edit/",
        {
            f"c{target.pk}-name": target.name,
            f"c{target.pk}-kind": "relative",
            f"c{target.pk}-metric": "step-time@1",
            f"c{target.pk}-operator": "gte",
            f"c{target.pk}-threshold": "0.8",
            f"c{target.pk}-min_samples": "30",
        },
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert "step-time@1 is deprecated; pin the active version, step-time@2." in html
    assert '<details class="edit" open>' in html
    assert throughput().metric == ref["throughput"]


def test_a_lead_deletes_and_is_told(client, lead, ref):
    client.force_login(lead)
    target = throughput()
    response = client.post(f"/programs/criteria/{target.pk}/delete/", follow=True)
    assert f"Deleted “{target.name}” and evaluated the gate again." in response.content.decode()
    assert not Criterion.objects.filter(pk=target.pk).exists()


def test_a_lead_forcing_a_change_on_a_decided_gate_is_told_to_reopen(client, lead, ref):
    services.gate_decide(gate=canary_gate(), actor=lead, decision="fail", note="no")
    client.force_login(lead)
    response = client.post(f"/programs/criteria/{throughput().pk}/delete/")
    assert response.status_code == 409
    assert "was already decided (failed); reopen it first." in response.content.decode()
    assert Criterion.objects.filter(pk=throughput().pk).exists()


def test_a_lead_repins_a_stale_gate_and_is_told(client, lead, ref):
    new_step = supersede(ref["step"])
    Gate.objects.filter(pk=canary_gate().pk).update(stale=True)
    client.force_login(lead)
    response = client.post(f"/programs/gates/{canary_gate().pk}/repin/", follow=True)
    html = response.content.decode()
    assert "Re-pinned 1 criterion to the active versions." in html
    assert "Re-pin to active versions" not in html and "newer active version" not in html
    assert Criterion.objects.get(gate=canary_gate(), name__startswith="Step time").metric == new_step


def test_the_gate_history_says_what_changed_in_words(client, lead, ref):
    new_step = supersede(ref["step"])
    services.criterion_edit(actor=lead, criterion=throughput(), threshold=0.9, window_days=14)
    services.criterion_add(actor=lead, gate=canary_gate(), name="Runbook", kind="manual")
    services.criterion_delete(actor=lead, criterion=Criterion.objects.get(name="Runbook"))
    services.gate_repin(actor=lead, gate=canary_gate())
    html = page(client, lead)
    name = throughput().name
    assert f"lead edited criterion “{name}”: threshold 0.8 → 0.9, window days — → 14" in html
    assert "lead added criterion “Runbook”" in html and "lead deleted criterion “Runbook”" in html
    step = Criterion.objects.get(gate=canary_gate(), metric=new_step).name
    assert f"lead re-pinned “{step}” step-time@1 → step-time@2" in html
