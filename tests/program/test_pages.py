"""Gate and program pages through the Django client: refusals are visible and keep what was typed."""

from __future__ import annotations

import pytest

from core.models import Transition
from program import services
from program.models import Decision, Gate
from tests.program.factories import make_lead, make_program, metrics_for_template

NOTE = "Throughput regressed on the 70B run; failing it until the rerun."


@pytest.fixture
def gate(db, lead):
    metrics_for_template()
    program = make_program(lead)
    return Gate.objects.filter(phase__program=program).order_by("pk").first()


def test_decision_that_lost_the_race_is_shown_with_its_note_kept(client, lead, lead2, gate):
    make_lead(gate.phase.program, lead2)
    # lead2 loaded the gate page while it was open; lead fails it first.
    services.gate_decide(gate=gate, actor=lead, decision="fail", note="first")
    client.force_login(lead2)
    response = client.post(
        f"/programs/gates/{gate.pk}/decide/",
        {"decision": "waive", "note": NOTE},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    assert response.status_code == 409
    assert "Your decision was not recorded." in html
    assert f"Gate &#x27;{gate.name}&#x27; was already decided (failed); reopen it first." in html
    assert NOTE in html  # still in the textarea
    assert 'value="waive" id="id_decision_2" required checked' in html  # the choice too
    assert Decision.objects.filter(gate=gate).count() == 1


def test_decision_refused_without_htmx_renders_the_whole_page_with_the_conflict(client, lead, lead2, gate):
    make_lead(gate.phase.program, lead2)
    services.gate_decide(gate=gate, actor=lead, decision="fail", note="first")
    client.force_login(lead2)
    response = client.post(f"/programs/gates/{gate.pk}/decide/", {"decision": "fail", "note": NOTE})
    assert response.status_code == 409
    html = response.content.decode()
    assert "<html" in html and "Your decision was not recorded." in html and NOTE in html


def test_decision_that_worked_redirects_back_to_the_gate(client, lead, gate):
    client.force_login(lead)
    response = client.post(f"/programs/gates/{gate.pk}/decide/", {"decision": "waive", "note": "ok"})
    assert response.status_code == 302 and response["Location"] == f"/programs/gates/{gate.pk}/"
    page = client.get(response["Location"]).content.decode()
    assert f"Gate &#x27;{gate.name}&#x27; decided: waive." in page


@pytest.mark.parametrize(
    ("path", "data", "needed"),
    [
        (
            "decide/",
            {"decision": "fail", "note": "x"},
            "Only a lead of program &#x27;rebuild&#x27; or a platform admin may decide gates.",
        ),
        (
            "reopen/",
            {"reason": "x"},
            "Only a lead of program &#x27;rebuild&#x27; or a platform admin may reopen gates.",
        ),
        (
            "evaluate/",
            {},
            "Only a lead of program &#x27;rebuild&#x27;, a metric owner or a platform admin may evaluate gates.",
        ),
    ],
)
def test_forced_gate_post_by_a_viewer_is_a_403_page_naming_the_role(client, viewer, gate, path, data, needed):
    client.force_login(viewer)
    before = Transition.objects.count()
    response = client.post(f"/programs/gates/{gate.pk}/{path}", data)
    assert response.status_code == 403
    html = response.content.decode()
    assert needed in html and 'class="topbar"' in html  # the site's page, not Django's bare one
    assert Transition.objects.count() == before
    gate.refresh_from_db()
    assert gate.status == "open" and gate.last_evaluated_at is None


def test_forced_htmx_post_by_a_viewer_gets_the_403_panel_only(client, viewer, gate):
    client.force_login(viewer)
    response = client.post(f"/programs/gates/{gate.pk}/evaluate/", headers={"HX-Request": "true"})
    assert response.status_code == 403
    html = response.content.decode()
    assert (
        "Only a lead of program &#x27;rebuild&#x27;, a metric owner or a platform admin may evaluate gates."
        in html
        and "<html" not in html
    )


@pytest.mark.parametrize(
    ("who", "shown"), [("viewer", False), ("engineer", False), ("metric_owner", True), ("lead", True)]
)
def test_evaluate_now_is_shown_only_to_leads_and_metric_owners(client, request, gate, who, shown):
    client.force_login(request.getfixturevalue(who))
    html = client.get(f"/programs/gates/{gate.pk}/").content.decode()
    assert ("Evaluate now" in html) is shown


def test_metric_owner_evaluates_from_the_page(client, metric_owner, gate):
    client.force_login(metric_owner)
    response = client.post(f"/programs/gates/{gate.pk}/evaluate/")
    assert response.status_code == 302
    gate.refresh_from_db()
    assert gate.last_evaluated_at is not None


def test_new_program_form_is_not_rendered_for_a_viewer(client, viewer, db):
    client.force_login(viewer)
    response = client.get("/programs/new/")
    assert response.status_code == 403
    html = response.content.decode()
    assert (
        "Only a program creator (group program-leads) or a platform admin may create programs." in html
        and 'name="slug"' not in html
    )
    assert "New program" not in client.get("/programs/").content.decode()


def test_gate_page_answers_why_from_the_evidence(client, viewer, db, lead):
    from tests.program.factories import observe, spread

    ref = metrics_for_template()
    make_program(lead)
    observe(ref["step"], ref["legacy"], ref["medium"], spread(800, 200))
    observe(ref["step"], ref["rebuilt"], ref["medium"], spread(628, 200))
    gate = Gate.objects.get(phase__kind="canary", kind="exit")
    services.criterion_add(
        actor=lead,
        gate=gate,
        name="Step p95 at most 700",
        kind="absolute",
        metric=ref["step"],
        workload=ref["medium"],
        statistic="p95",
        operator="lte",
        threshold=700,
        require_significant=True,
    )
    services.gate_evaluate(gate=gate)
    client.force_login(viewer)
    html = client.get(f"/programs/gates/{gate.pk}/").content.decode()
    # Step time is lower-is-better: a lower candidate reads as better, with the ratio as it is.
    assert "— 21.5 % lower, which is better for this metric (lower is better)." in html
    assert "the whole interval satisfies ≤ 700" in html
    assert "95 % interval" in html and "order-statistic interval per side" in html
    assert "data from the start until" in html
    assert "threshold 700" in html  # the absolute threshold drawn on the bars
