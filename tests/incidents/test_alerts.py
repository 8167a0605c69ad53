"""alert_receive through POST /api/v1/incidents/alertmanager/ (a token of scope `alerts`): opening,
attaching, replays, mitigation, unrouted alerts, bad payloads and the token's scope; and the route
services."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone
from rest_framework.test import APIClient

from core.audit import transition_sentence, transitions_for
from core.errors import ApplicationError
from core.models import Notification, Transition
from incidents.models import AlertRoute, Incident, UnroutedAlert
from incidents.services import alerts
from tests.conftest import api_token, make_user
from tests.incidents.factories import incidents_setup

URL = "/api/v1/incidents/alertmanager/"
FP = "3f1c9e2ab4d05e67"


@pytest.fixture
def refs(db):
    return incidents_setup()


@pytest.fixture
def bot(db):
    make_user("oncall", "training-platform")  # the nccl component's owner team: told of changes
    return make_user("alertmanager-bot", "framework-engineers")


@pytest.fixture
def route(refs, bot):
    return alerts.alert_route_create(
        actor=bot,
        matchers={"alertname": "NcclAllReduceHang"},
        system=refs["rebuilt"],
        component=refs["nccl"],
        workload=refs["workload"],
        bug_class=refs["hang"],
        severity="sev2",
    )


@pytest.fixture
def am(bot):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token(bot, 'alerts')}")
    return client


def alert(status="firing", *, fp=FP, starts=None, ends=None, **labels):
    starts = starts or timezone.now() - timedelta(hours=2)
    return {
        "status": status,
        "labels": {"alertname": "NcclAllReduceHang", "cluster": "rebuilt", **labels},
        "annotations": {"summary": "All-reduce stuck on 64 ranks", "description": "No progress for 10 m"},
        "startsAt": starts.isoformat(),
        "endsAt": ends.isoformat() if ends else "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus.example.com:9090/graph?g0.expr=nccl_progress",
        "fingerprint": fp,
    }


def payload(*items, status=None):
    return {
        "version": "4",
        "groupKey": '{}:{alertname="NcclAllReduceHang"}',
        "truncatedAlerts": 0,
        "status": status or items[0]["status"],
        "receiver": "rebuild-tracker",
        "groupLabels": {"alertname": "NcclAllReduceHang"},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "alerts": list(items),
    }


def outcomes(response):
    assert response.status_code == 200, response.json()
    return [row["outcome"] for row in response.json()]


def test_a_firing_alert_opens_an_incident_detected_at_its_start_on_its_route(am, route, refs):
    starts = timezone.now() - timedelta(hours=2)
    assert outcomes(am.post(URL, payload(alert(starts=starts)), format="json")) == ["opened"]
    incident = Incident.objects.get()
    assert incident.detected_at == starts
    assert (incident.system, incident.component, incident.workload, incident.bug_class) == (
        refs["rebuilt"],
        refs["nccl"],
        refs["workload"],
        refs["hang"],
    )
    assert incident.severity == "sev2"  # the route's: the alert has no sev1–sev4 label
    assert incident.alert_fingerprint == FP and incident.title == "All-reduce stuck on 64 ranks"
    assert incident.link.startswith("http://prometheus.example.com:9090/graph") and incident.state == "open"
    assert [t.action for t in transitions_for(incident)] == ["filed", "alert-opened"]
    assert Notification.objects.filter(event="incident.filed").count() == 1


def test_the_alerts_own_severity_label_wins_when_it_is_one_of_ours(am, route):
    am.post(URL, payload(alert(severity="sev1")), format="json")
    assert Incident.objects.get().severity == "sev1"


def test_the_same_notification_again_writes_nothing(am, route):
    body = payload(alert())
    am.post(URL, body, format="json")
    rows = Transition.objects.count(), Notification.objects.count()
    assert outcomes(am.post(URL, body, format="json")) == ["attached"]
    assert Incident.objects.count() == 1
    assert (Transition.objects.count(), Notification.objects.count()) == rows


def test_a_firing_alert_of_the_same_fingerprint_attaches_to_the_open_incident(am, route):
    first = timezone.now() - timedelta(hours=3)
    am.post(URL, payload(alert(starts=first)), format="json")
    later = alert(starts=first + timedelta(minutes=30), instance="gpu-7")
    assert outcomes(am.post(URL, payload(later), format="json")) == ["attached"]
    assert Incident.objects.get().detected_at == first


def test_a_resolved_alert_mitigates_at_its_end_and_its_replays_change_nothing(am, route):
    starts = timezone.now() - timedelta(hours=3)
    ends = starts + timedelta(minutes=50)
    am.post(URL, payload(alert(starts=starts)), format="json")
    resolved = payload(alert("resolved", starts=starts, ends=ends))
    assert outcomes(am.post(URL, resolved, format="json")) == ["mitigated"]
    incident = Incident.objects.get()
    assert incident.mitigated_at == ends and incident.resolved_at is None and incident.state == "mitigated"
    assert [t.action for t in transitions_for(incident)][-2:] == ["updated", "alert-resolved"]
    words = transition_sentence(transitions_for(incident).last())
    assert words == "alertmanager-bot got the resolved alert for it (open → mitigated)"
    assert Notification.objects.filter(event="incident.mitigated").count() == 1
    rows = Transition.objects.count()
    assert outcomes(am.post(URL, resolved, format="json")) == ["replayed"]
    # The old firing notification arriving late does not undo the mitigation either.
    assert outcomes(am.post(URL, payload(alert(starts=starts)), format="json")) == ["attached"]
    incident.refresh_from_db()
    assert incident.mitigated_at == ends and Transition.objects.count() == rows


def test_firing_again_after_mitigation_reopens_the_impact_of_the_same_incident(am, route):
    starts = timezone.now() - timedelta(hours=3)
    am.post(URL, payload(alert(starts=starts)), format="json")
    am.post(
        URL, payload(alert("resolved", starts=starts, ends=starts + timedelta(minutes=20))), format="json"
    )
    again = alert(starts=starts + timedelta(hours=1))
    assert outcomes(am.post(URL, payload(again), format="json")) == ["refired"]
    incident = Incident.objects.get()
    assert incident.mitigated_at is None and incident.detected_at == starts
    assert "alert-refired" in [t.action for t in transitions_for(incident)]


def test_the_end_of_an_earlier_firing_arriving_after_it_fired_again_is_a_replay(am, route):
    starts = timezone.now() - timedelta(hours=3)
    first_end = starts + timedelta(minutes=20)
    am.post(URL, payload(alert(starts=starts)), format="json")
    am.post(URL, payload(alert("resolved", starts=starts, ends=first_end)), format="json")
    again = starts + timedelta(hours=1)
    am.post(URL, payload(alert(starts=again)), format="json")
    stale = payload(alert("resolved", starts=starts, ends=first_end))
    assert outcomes(am.post(URL, stale, format="json")) == ["replayed"]
    assert Incident.objects.get().mitigated_at is None
    end = again + timedelta(minutes=10)
    assert outcomes(am.post(URL, payload(alert("resolved", starts=again, ends=end)), format="json")) == [
        "mitigated"
    ]
    assert Incident.objects.get().mitigated_at == end


def test_after_a_person_resolves_it_a_late_repeat_is_a_no_op_and_a_new_firing_a_new_incident(am, route, bot):
    from incidents.services import incident_resolve

    starts = timezone.now() - timedelta(hours=5)
    am.post(URL, payload(alert(starts=starts)), format="json")
    incident_resolve(actor=bot, incident=Incident.objects.get(), resolved_at=starts + timedelta(hours=1))
    assert outcomes(am.post(URL, payload(alert(starts=starts)), format="json")) == ["replayed"]
    late = alert("resolved", starts=starts, ends=starts + timedelta(hours=2))
    assert outcomes(am.post(URL, payload(late), format="json")) == ["ignored"]
    assert Incident.objects.count() == 1
    new = alert(starts=starts + timedelta(hours=3))
    assert outcomes(am.post(URL, payload(new), format="json")) == ["opened"]
    assert Incident.objects.filter(alert_fingerprint=FP, resolved_at__isnull=True).count() == 1


def test_an_unrouted_alert_opens_nothing_is_kept_and_opens_once_a_route_matches(am, refs, bot):
    starts = timezone.now() - timedelta(hours=1)
    body = payload(alert(starts=starts))
    assert outcomes(am.post(URL, body, format="json")) == ["unrouted"]
    assert outcomes(am.post(URL, body, format="json")) == ["unrouted"]
    assert not Incident.objects.exists()
    kept = UnroutedAlert.objects.get()
    assert (kept.fingerprint, kept.alertname, kept.times_seen) == (FP, "NcclAllReduceHang", 2)
    alerts.alert_route_create(
        actor=bot,
        matchers={"cluster": "rebuilt"},
        system=refs["rebuilt"],
        component=refs["nccl"],
        bug_class=refs["hang"],
    )
    assert outcomes(am.post(URL, body, format="json")) == ["opened"]  # Alertmanager's repeat
    assert Incident.objects.get().detected_at == starts
    assert not UnroutedAlert.objects.exists()


def test_the_first_route_in_position_order_that_matches_wins(am, refs, bot):
    common = {"system": refs["rebuilt"], "component": refs["nccl"]}
    alerts.alert_route_create(actor=bot, matchers={}, bug_class=refs["divergence"], position=50, **common)
    alerts.alert_route_create(
        actor=bot, matchers={"alertname": "NcclAllReduceHang"}, bug_class=refs["hang"], position=10, **common
    )
    am.post(URL, payload(alert()), format="json")
    am.post(URL, payload(alert(fp="aa01", alertname="LossIsNaN")), format="json")
    assert {i.alert_fingerprint: i.bug_class.key for i in Incident.objects.all()} == {
        FP: "communication-hang",
        "aa01": "numerical-divergence",
    }


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"version": "3"}, "version"),
        ({"alerts": {"0": alert()}}, "alerts"),
        ({"alerts": "all of them"}, "alerts"),
        ({"receiver": None}, "receiver"),
        ({"status": "pending"}, "status"),
    ],
)
def test_a_malformed_envelope_is_a_400_naming_the_field_and_writes_nothing(am, route, change, field):
    response = am.post(URL, {**payload(alert()), **change}, format="json")
    assert response.status_code == 400
    assert field in [error["field"] for error in response.json()["errors"]]
    assert not Incident.objects.exists() and not UnroutedAlert.objects.exists()


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({**alert(fp="bb02"), "startsAt": "yesterday"}, "alerts.0.startsAt"),
        ({k: v for k, v in alert().items() if k != "fingerprint"}, "alerts.0.fingerprint"),
        ({**alert(fp="bb02"), "status": "pending"}, "alerts.0.status"),
        ({**alert(fp="bb02"), "labels": "alertname=x"}, "alerts.0.labels"),
        ({**alert(fp="bb02"), "labels": {"bad\u0000name": "x"}}, "alerts.0.labels"),
        (alert("resolved", fp="bb02"), "alerts.0.endsAt"),
        ("not an alert", "alerts.0"),
        (alert(fp="bb02", starts=timezone.now() + timedelta(days=1)), "alerts.0.startsAt"),
    ],
)
def test_an_unusable_alert_is_refused_naming_its_field_and_the_others_are_written(
    am, route, bad, field, caplog
):
    good = alert(fp="cc03")
    with caplog.at_level("WARNING", logger="incidents.services.alerts"):
        response = am.post(URL, payload(bad, good, status="firing"), format="json")
    assert outcomes(response) == ["refused", "opened"]
    refused = response.json()[0]
    assert refused["field"] == field and refused["reason"] and refused["incident"] is None
    assert field in caplog.text
    assert list(Incident.objects.values_list("alert_fingerprint", flat=True)) == ["cc03"]
    assert not UnroutedAlert.objects.exists()


def test_a_refused_alert_does_not_lose_the_resolution_sent_with_it(am, route):
    starts = timezone.now() - timedelta(hours=2)
    am.post(URL, payload(alert(starts=starts)), format="json")
    future = alert(fp="bb02", starts=timezone.now() + timedelta(days=1))
    ends = starts + timedelta(minutes=40)
    response = am.post(URL, payload(future, alert("resolved", starts=starts, ends=ends)), format="json")
    assert outcomes(response) == ["refused", "mitigated"]
    assert response.json()[0]["field"] == "alerts.0.startsAt"
    assert Incident.objects.get().mitigated_at == ends


def test_label_names_with_dots_are_taken_and_routes_match_them(am, refs, bot):
    alerts.alert_route_create(
        actor=bot,
        matchers={"k8s.namespace": "training"},
        system=refs["rebuilt"],
        component=refs["nccl"],
        bug_class=refs["hang"],
    )
    dotted = alert(**{"k8s.namespace": "training"})
    assert outcomes(am.post(URL, payload(dotted), format="json")) == ["opened"]


def test_a_failure_began_at_annotation_before_the_firing_is_when_the_incident_opened(am, route):
    starts = timezone.now() - timedelta(hours=2)
    began = starts - timedelta(minutes=25)
    early = alert(starts=starts)
    early["annotations"]["failure_began_at"] = began.isoformat().replace("+00:00", "Z")
    assert outcomes(am.post(URL, payload(early), format="json")) == ["opened"]
    incident = Incident.objects.get()
    assert (incident.opened_at, incident.detected_at) == (began, starts)


@pytest.mark.parametrize("annotation", [None, "after", "not a time", "2026-01-01T00:00:00"])
def test_without_a_usable_failure_began_at_the_incident_opens_at_the_firing(am, route, annotation):
    starts = timezone.now() - timedelta(hours=2)
    sent = alert(starts=starts)
    if annotation == "after":
        sent["annotations"]["failure_began_at"] = (starts + timedelta(minutes=5)).isoformat()
    elif annotation:  # unparsable, or without an offset (not RFC 3339)
        sent["annotations"]["failure_began_at"] = annotation
    assert outcomes(am.post(URL, payload(sent), format="json")) == ["opened"]
    incident = Incident.objects.get()
    assert incident.opened_at == incident.detected_at == starts  # MTTD counts from the firing: 0


def test_a_token_without_the_alerts_scope_is_refused_naming_it(route, bot):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token(bot, 'ingest')}")
    response = client.post(URL, payload(alert()), format="json")
    assert response.status_code == 403 and "`alerts`" in response.json()["detail"]
    assert not Incident.objects.exists()


def test_an_alerts_token_reads_nothing_else(am):
    response = am.get("/api/v1/incidents/")
    assert response.status_code == 403 and "`read`" in response.json()["detail"]


def test_the_tokens_user_must_be_allowed_to_file_incidents(route, viewer):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token(viewer, 'alerts')}")
    response = client.post(URL, payload(alert()), format="json")
    assert response.status_code == 403 and "open incidents from alerts" in response.json()["detail"]
    assert not Incident.objects.exists()
    with pytest.raises(PermissionDenied):
        alerts.alert_receive(actor=viewer, receiver="x", alerts=[], now=timezone.now())


def test_a_route_names_labels_as_labels_and_only_writers_manage_routes(refs, bot, viewer):
    values = {"system": refs["rebuilt"], "component": refs["nccl"], "bug_class": refs["hang"]}
    with pytest.raises(ApplicationError) as refused:
        alerts.alert_route_create(actor=bot, matchers={"": "x"}, **values)
    assert refused.value.errors[0]["field"] == "matchers"
    with pytest.raises(PermissionDenied):
        alerts.alert_route_create(actor=viewer, matchers={}, **values)
    assert not AlertRoute.objects.exists()


def test_route_changes_are_audited(refs, bot):
    values = {"system": refs["rebuilt"], "component": refs["nccl"], "bug_class": refs["hang"]}
    first = alerts.alert_route_create(actor=bot, matchers={"a": "1"}, **values)
    second = alerts.alert_route_create(actor=bot, matchers={"a": "2"}, **values)
    assert (first.position, second.position) == (0, 10)
    alerts.alert_route_update(actor=bot, route=second, changes={"position": 5, "severity": "sev1"})
    alerts.alert_route_delete(actor=bot, route=first)
    assert list(AlertRoute.objects.values_list("position", "severity")) == [(5, "sev1")]
    assert [t.action for t in transitions_for(second)] == ["created", "updated"]
    assert transitions_for(second).last().data["changed"] == ["position", "severity"]
    assert [t.action for t in transitions_for(first)] == ["created", "deleted"]
