"""One incident's page (issue 29): "Resolve…" asks for the times the person states, the service checks
them; runbook ticks save at once; the history reads in words with people's names."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import Transition
from tests.incidents.factories import file_incident, incidents_setup

FMT = "%Y-%m-%dT%H:%M"


@pytest.fixture
def refs(db):
    return incidents_setup()


def test_resolve_asks_first_with_both_times_defaulting_to_now(refs, client, engineer):
    incident = file_incident(engineer, refs)
    client.force_login(engineer)
    html = client.get(f"/incidents/{incident.pk}/").content.decode()
    assert 'data-testid="resolve"' in html and "<summary" in html and "Resolve now" not in html
    now = timezone.now().strftime(FMT)[:-1]  # the minute may turn while the page renders
    assert f'name="resolve-mitigated_at" value="{now}' in html
    assert f'name="resolve-resolved_at" value="{now}' in html


def test_resolve_takes_the_stated_times_as_the_evidence(refs, client, engineer):
    incident = file_incident(engineer, refs)
    mitigated = incident.detected_at + timedelta(hours=2)
    resolved = incident.detected_at + timedelta(hours=5)
    client.force_login(engineer)
    response = client.post(
        f"/incidents/{incident.pk}/resolve/",
        {"resolve-mitigated_at": mitigated.strftime(FMT), "resolve-resolved_at": resolved.strftime(FMT)},
    )
    assert response.status_code == 302
    incident.refresh_from_db()
    assert incident.state == "resolved"
    assert incident.mitigated_at == mitigated.replace(second=0, microsecond=0)
    assert incident.resolved_at == resolved.replace(second=0, microsecond=0)


@pytest.mark.parametrize(
    ("field", "when", "says"),
    [
        ("resolved_at", lambda i: i.detected_at - timedelta(hours=1), "Resolved at must not be before"),
        (
            "resolved_at",
            lambda i: timezone.now() + timedelta(days=1),
            "Resolved at must not be in the future.",
        ),
        (
            "mitigated_at",
            lambda i: i.opened_at - timedelta(hours=1),
            "Mitigated at must not be before detected at.",
        ),
    ],
)
def test_resolve_refuses_times_before_detection_or_in_the_future(refs, client, engineer, field, when, says):
    incident = file_incident(engineer, refs)
    times = {
        "mitigated_at": incident.detected_at + timedelta(minutes=5),
        "resolved_at": incident.detected_at + timedelta(hours=1),
    }
    times[field] = when(incident)
    if field == "resolved_at" and times["resolved_at"] < times["mitigated_at"]:
        times["mitigated_at"] = incident.detected_at  # one broken rule at a time
    client.force_login(engineer)
    response = client.post(
        f"/incidents/{incident.pk}/resolve/", {f"resolve-{k}": v.strftime(FMT) for k, v in times.items()}
    )
    assert response.status_code == 400
    html = response.content.decode()
    summary = html[html.index('data-testid="error-summary"') :]
    assert f'href="#id_resolve-{field}"' in summary[: summary.index("</div>")] and says in html
    assert '<details class="resolve-confirm" data-testid="resolve" open>' in html  # shown again, open
    incident.refresh_from_db()
    assert incident.resolved_at is None


def test_a_runbook_tick_saves_at_once_and_is_there_after_reload(refs, client, engineer):
    incident = file_incident(engineer, refs)
    client.force_login(engineer)
    response = client.post(
        f"/incidents/{incident.pk}/checklist/", {"done_steps": ["1"]}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    fragment = response.content.decode()
    assert fragment.lstrip().startswith('<section class="card grow" id="runbook">')
    assert "Saved: 1 of 5 steps done." in fragment
    html = client.get(f"/incidents/{incident.pk}/").content.decode()
    assert '<input type="checkbox" name="done_steps" value="1" id="id_done_steps_1" checked>' in html
    assert '<input type="checkbox" name="done_steps" value="0" id="id_done_steps_0">' in html
    incident.refresh_from_db()
    assert [step["done"] for step in incident.checklist] == [False, True, False, False, False]
    record = Transition.objects.filter(object_id=incident.pk, action="updated").latest("at")
    assert record.actor == engineer and record.data["changed"] == ["checklist"]


def test_a_reader_sees_the_runbook_without_boxes_to_tick(refs, client, engineer, viewer):
    incident = file_incident(engineer, refs)
    client.force_login(viewer)
    html = client.get(f"/incidents/{incident.pk}/").content.decode()
    assert '<fieldset class="checks runbook" disabled>' in html and "hx-post" not in html
